// Runs `register serve` as a child process the way an operator does, so tests can SIGKILL or SIGTERM it: cold
// (node bin/register.mjs serve …) or from a pool of pre-warmed standbys (standby-serve.mjs) for long crash loops.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/register.mjs', import.meta.url));
const STANDBY_TSX = fileURLToPath(new URL('./standby-serve.mjs', import.meta.url));
const STANDBY_ENTRY = fileURLToPath(new URL('./standby-entry.ts', import.meta.url));
// Inside the project so the bundle's bare imports (msgpackr, …) resolve from node_modules, like the sources'.
const CACHE = join(ROOT, 'node_modules', '.cache', 'identity-register-reliability');

export interface StandbyEntry {
  /** The script a standby runs (`node <script> serve …`). */
  script: string;
  /** `tsx` (the sources through tsx, as bin/register.mjs loads them) or `bundle` (the same sources, one file). */
  kind: 'tsx' | 'bundle';
  /** Removes a built bundle. */
  dispose(): void;
}

/**
 * The standby script as an esbuild bundle when esbuild can be loaded: the same sources transformed by the same tool
 * tsx uses, but far less CPU to load, which is most of a crash cycle's cost on a 2-core machine. Built like the
 * production build: split into chunks, so the modules `serve` imports lazily (the Redis driver, the compiler's
 * progress bar) stay unloaded unless used (one file would load them all up front, doubling a standby's start-up
 * CPU), and with the same packages bundled. Falls back to the tsx standby.
 */
export async function standbyEntry(): Promise<StandbyEntry> {
  try {
    const esbuild = (await import('esbuild' as string)) as { build(o: Record<string, unknown>): Promise<unknown> };
    const { dependenciesExternal } = await import('../../../scripts/build.mjs');
    const outdir = join(CACHE, `standby-${process.pid}-${Date.now()}`);
    mkdirSync(outdir, { recursive: true });
    await esbuild.build({
      entryPoints: { 'standby-entry': STANDBY_ENTRY },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      plugins: [dependenciesExternal()],
      outdir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    });
    return { script: join(outdir, 'standby-entry.mjs'), kind: 'bundle', dispose: () => rmSync(outdir, { recursive: true, force: true }) };
  } catch {
    return { script: STANDBY_TSX, kind: 'tsx', dispose: () => {} };
  }
}
const LISTENING = /\[serve\] listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/;

export interface ServerProcess {
  proc: ChildProcess;
  /** Resolves with the API base (`http://127.0.0.1:PORT/api/v1`) once the server listens; rejects if it exits first. */
  ready: Promise<string>;
  /** Resolves when the process has exited (and been reaped, so its pid is free). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

function watch(proc: ChildProcess): ServerProcess {
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = LISTENING.exec(err);
      if (m) resolve(`${m[1]}/api/v1`);
    });
    void exited.then(({ code, signal }) => reject(new Error(`server exited (${signal ?? code}) before listening:\n${err}`)));
  });
  ready.catch(() => {}); // a server killed during start-up never becomes ready; that is not an error by itself
  return {
    proc,
    ready,
    exited,
    stderr: () => err,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** `node bin/register.mjs serve <args>`: exactly what an operator runs. */
export function spawnServe(args: string[], nodeOptions: string[] = []): ServerProcess {
  return watch(spawn(process.execPath, [...nodeOptions, BIN, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] }));
}

/**
 * Keeps `size` standbys loaded and waiting. take() starts one (it then opens the state directory and listens, like
 * a cold start) and begins warming its replacement. Every process the pool started is killed by close().
 */
export class StandbyPool {
  private readonly waiting: { proc: ChildProcess; warm: Promise<void> }[] = [];
  private readonly all = new Set<ChildProcess>();

  constructor(
    private readonly entry: StandbyEntry,
    private readonly args: string[],
    size = 2,
  ) {
    for (let i = 0; i < size; i++) this.waiting.push(this.spawnOne());
  }

  private spawnOne(): { proc: ChildProcess; warm: Promise<void> } {
    const proc = spawn(process.execPath, [this.entry.script, 'serve', ...this.args], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] });
    this.all.add(proc);
    proc.once('exit', () => this.all.delete(proc));
    const warm = new Promise<void>((resolve, reject) => {
      let err = '';
      const onData = (d: Buffer): void => {
        err += d.toString();
        if (err.includes('[standby] warm')) {
          proc.stderr!.off('data', onData);
          resolve();
        }
      };
      proc.stderr!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`standby exited (${code}) before it was warm:\n${err}`)));
    });
    warm.catch(() => {});
    return { proc, warm };
  }

  async take(): Promise<ServerProcess> {
    const next = this.waiting.shift()!;
    this.waiting.push(this.spawnOne());
    await next.warm;
    const server = watch(next.proc);
    next.proc.stdin!.end('go\n');
    return server;
  }

  async close(): Promise<void> {
    const exits = [...this.all].map((p) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(null) : p.once('exit', r))));
    for (const p of this.all) p.kill('SIGKILL');
    await Promise.all(exits);
  }
}
