// Test helper: a real redis-server (the Debian package) of the test's own, on a free 127.0.0.1 port with a temporary
// folder, configured as docs/operations.md ("Redis settings") asks (AOF, appendfsync always). The test stops it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  /** `redis://127.0.0.1:PORT/0`. */
  url: string;
  port: number;
  dir: string;
  /** The running process's pid, or null while stopped. */
  pid(): number | null;
  /** SIGKILL (nothing flushed beyond what Redis already wrote), then wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (Redis's own shutdown), then wait for the exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder (after kill or stop); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and removes its folder. */
  dispose(): Promise<void>;
}

/** Extra `redis-server` arguments, e.g. `['--appendfsync', 'everysec']`. */
export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ir-redis-'));
  let proc: ChildProcess | null = null;
  let port = 0;

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no', '--protected-mode', 'no', ...extraArgs];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer): void => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${out.slice(-2000)}`)));
    });
  };
  const exited = (): Promise<void> =>
    new Promise((resolve) => {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
    });

  // A port free a moment ago can be taken before redis binds it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (e) {
      if (attempt >= 4 || !/in use/i.test((e as Error).message)) throw e;
    }
  }

  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    dir,
    pid: () => (proc && proc.exitCode === null && proc.signalCode === null ? proc.pid ?? null : null),
    async kill() {
      const done = exited();
      proc?.kill('SIGKILL');
      await done;
    },
    async stop() {
      const done = exited();
      proc?.kill('SIGTERM');
      await done;
    },
    async start() {
      // Its port was free while it was down, and a busy test run may have handed it to a client's connection for a
      // moment meanwhile: try again until that has gone (only "in use" is retried).
      for (let attempt = 0; ; attempt++) {
        try {
          return await launch();
        } catch (e) {
          if (attempt >= 50 || !/in use/i.test((e as Error).message)) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    async dispose() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A port nothing listens on right now (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
