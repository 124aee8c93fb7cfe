// The few Workers runtime types the edge code names, declared here rather than taking @cloudflare/workers-types (its
// globals clash with the DOM and Node types the rest of the project is checked against).
declare module 'cloudflare:workers' {
  export interface DurableObjectStorage {
    get<T = unknown>(key: string): Promise<T | undefined>;
    put<T>(key: string, value: T): Promise<void>;
    put<T>(entries: Record<string, T>): Promise<void>;
    list<T = unknown>(options?: { prefix?: string }): Promise<Map<string, T>>;
  }
  export interface DurableObjectState {
    readonly storage: DurableObjectStorage;
    blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
  }
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: DurableObjectState;
    protected readonly env: Env;
    constructor(ctx: DurableObjectState, env: Env);
  }
}

// The built pages (build/pages/), written into the bundle by `register edge build` (bundle.ts): each file by its
// path under the folder, as its text when it is UTF-8 (it gzips as the file does) or else as base64.
declare module 'register:pages' {
  const files: Record<string, { text: string } | { base64: string }>;
  export default files;
}
