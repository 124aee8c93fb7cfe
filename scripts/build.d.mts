// Types of scripts/build.mjs for the TypeScript that imports it (the test setup).
/** Builds build/ from the sources; resolves with the number of files written. */
export function build(): Promise<number>;
/** Why build/ needs building, or null when it is current. */
export function staleness(): string | null;
/** Builds when a source changed since the last build; concurrent callers build once. */
export function ensureBuilt(options?: { log?: (line: string) => void }): Promise<void>;
/** esbuild plugin: every dependency external (imported from node_modules) but the few build/ bundles. */
export function dependenciesExternal(): { name: string; setup(build: unknown): void };
