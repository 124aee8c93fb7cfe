// Child processes of the benchmark: start one and wait for its "ready" line, stop it by pid, read its memory from
// /proc, find a free loopback port. Every child started here is stopped when the benchmark exits, even on error.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { descendantsOf, machineBusyMs } from './load-generator.ts';

const live = new Set<ChildProcess>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // Only the children this process started, each by its own pid.
  const killAll = () => {
    for (const c of live) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => { killAll(); process.exit(130); });
}

/** Options of startChild. */
export interface ChildOptions {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here (for post-mortems); the ready pattern is matched on both. */
  logFile: string;
  /** Resolves once a line matches; group 1 is returned (e.g. the port). Without it, resolves on spawn. */
  ready?: RegExp;
  /** Gives up (and kills the child) after this many ms (default 60 s). */
  timeoutMs?: number;
}

export interface StartedChild {
  child: ChildProcess;
  pid: number;
  /** Group 1 of the ready match, or the whole match. */
  ready: string;
  /** ms from spawn to the ready line. */
  readyMs: number;
}

export function startChild(opts: ChildOptions): Promise<StartedChild> {
  hookExit();
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  log.write(`\n# ${new Date().toISOString()} ${opts.command} ${opts.args.join(' ')}\n`);
  const t0 = performance.now();
  const child = spawn(opts.command, opts.args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.on('exit', () => live.delete(child));
  return new Promise((resolve, reject) => {
    let buffered = '';
    let done = false;
    const timer = setTimeout(() => fail(new Error(`${opts.command} ${opts.args.join(' ')}: not ready within ${opts.timeoutMs ?? 60_000} ms (see ${opts.logFile})`)), opts.timeoutMs ?? 60_000);
    const fail = (e: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      if (done || !opts.ready) return;
      // Only keep text until the ready line is seen; afterwards the child's output just goes to the log.
      buffered += chunk.toString('utf8');
      const m = opts.ready.exec(buffered);
      if (m) {
        done = true;
        clearTimeout(timer);
        resolve({ child, pid: child.pid!, ready: m[1] ?? m[0], readyMs: performance.now() - t0 });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (e) => fail(e));
    child.on('close', () => log.end());
    child.on('exit', (code, signal) => {
      fail(new Error(`${opts.command} ${opts.args.join(' ')} exited (${code ?? signal}) before it was ready; see ${opts.logFile}`));
    });
    if (!opts.ready) {
      child.on('spawn', () => {
        done = true;
        clearTimeout(timer);
        resolve({ child, pid: child.pid!, ready: '', readyMs: performance.now() - t0 });
      });
    }
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.pid && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.pid) process.kill(child.pid, 'SIGTERM');
  });
}

/** Runs a command to completion; resolves with its exit code, stdout and wall time. */
export function runToEnd(command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; logFile?: string } = {}): Promise<{ code: number; stdout: string; stderr: string; wallMs: number }> {
  hookExit();
  const t0 = performance.now();
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : null;
  log?.write(`\n# ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    log?.write(c);
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    log?.write(c);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      live.delete(child);
      log?.end();
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, wallMs: performance.now() - t0 });
    });
  });
}

/**
 * A key for a benchmark, added by `register keys add` run in `cwd` (whose build it uses), with a quota and rate no
 * load reaches; returns the Authorization header that carries it.
 */
export async function addBenchKey(cwd: string, keys: string, name: string, logFile?: string): Promise<{ authorization: string }> {
  const args = ['bin/register.mjs', 'keys', 'add', '--name', name, '--quota', '1000000000000', '--rate', '1000000000', '--keys', keys];
  const added = await runToEnd(process.execPath, args, { cwd, logFile });
  if (added.code !== 0) throw new Error(`keys add failed: ${added.stderr.trim()}`);
  return { authorization: `Bearer ${added.stdout.trim().split('\n').pop()}` };
}

/** Polls until GET path answers 200 (connection refused while the process starts is expected). */
export async function waitFor200(port: number, path: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < end) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
      await r.arrayBuffer();
      if (r.status === 200) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no 200 from 127.0.0.1:${port}${path} within ${timeoutMs} ms (last: ${last})`);
}

/** A port free on 127.0.0.1 right now (the tiny race with another process taking it is acceptable here). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Current and peak resident set of a process plus every descendant (a `serve --workers N` primary and its
 * workers), from /proc/<pid>/status (Linux); null elsewhere. The peak is the sum of each process's own peak, an
 * upper bound of the tree's.
 */
export function memoryOf(pid: number): { rssBytes: number; hwmBytes: number; processes: number } | null {
  const own = ownMemory(pid);
  if (!own) return null;
  const all = [own, ...descendantsOf(pid).map(ownMemory).filter((m): m is { rssBytes: number; hwmBytes: number } => m !== null)];
  return { rssBytes: all.reduce((a, m) => a + m.rssBytes, 0), hwmBytes: all.reduce((a, m) => a + m.hwmBytes, 0), processes: all.length };
}

function ownMemory(pid: number): { rssBytes: number; hwmBytes: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Share of one core above which another job counts as disturbing a measurement. */
export const QUIET_BELOW_PCT = 25;

/**
 * Waits (up to `maxWaitMs`) for a 2-second window in which the machine is nearly idle, so a measurement does not
 * start while another job (a test suite, a compile) holds the cores. Call it only while this benchmark's own children
 * are idle: their CPU counts too. Returns how long it waited and the last window's busy share (% of one core).
 */
export async function waitForQuiet(maxWaitMs: number): Promise<{ waitedMs: number; busyPct: number | null; quiet: boolean }> {
  const t0 = performance.now();
  let busyPct: number | null = null;
  do {
    const b0 = machineBusyMs();
    await new Promise((r) => setTimeout(r, 2000));
    const b1 = machineBusyMs();
    if (b0 === null || b1 === null) return { waitedMs: 0, busyPct: null, quiet: true };
    busyPct = Math.round((100 * (b1 - b0)) / 2000);
    if (busyPct < QUIET_BELOW_PCT) return { waitedMs: Math.round(performance.now() - t0), busyPct, quiet: true };
  } while (performance.now() - t0 < maxWaitMs);
  return { waitedMs: Math.round(performance.now() - t0), busyPct, quiet: false };
}
