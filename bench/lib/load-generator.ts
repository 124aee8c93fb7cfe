// A closed-loop HTTP load generator: N workers on N kept-alive connections, each sending its next request as soon as
// the previous one answers, for a bounded time and count; reports rps, latency percentiles, statuses and CPU use.
import { readdirSync, readFileSync } from 'node:fs';
import { createTransport, type LoadRequest, type TransportKind } from './transports.ts';

export type { LoadRequest, TransportKind } from './transports.ts';

/** Options of runLoad. */
export interface LoadOptions {
  host: string;
  port: number;
  /** Builds the i-th request (called once per request, so it should be cheap: precompute what it can). */
  next: (i: number) => LoadRequest;
  /** Extra headers on every request (e.g. the bearer key). */
  headers?: Record<string, string>;
  /** Concurrent connections, one worker each (default 50). */
  concurrency?: number;
  /** Measured phase in ms. */
  durationMs: number;
  /** Unmeasured phase before it in ms, so JIT, page cache and connection setup do not count (default 2000). */
  warmupMs?: number;
  /** Hard cap on measured requests, so a very fast target cannot grow the latency array without bound (default 5M). */
  maxRequests?: number;
  /** A request not answered within this many ms counts as an error (default 10 s). */
  timeoutMs?: number;
  /** How requests are written and answers read (default `net`: see transports.ts). */
  transport?: TransportKind;
  /** pid of the server, to report its CPU use over the measured phase (Linux /proc). */
  serverPid?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers per HTTP status; `error` counts transport errors and timeouts. */
  statuses: Record<string, number>;
  meanResponseBytes: number;
  /** CPU used by this (the generator's) process and by the server over the measured phase, in % of one core. */
  clientCpuPct: number;
  serverCpuPct: number | null;
  /** CPU the rest of the machine used meanwhile (all cores' busy time minus client and server): other jobs. */
  otherCpuPct: number | null;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const concurrency = opts.concurrency ?? 50;
  const maxRequests = opts.maxRequests ?? 5_000_000;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const transport = createTransport(opts.transport ?? 'net', { host: opts.host, port: opts.port, headers: opts.headers ?? {}, concurrency, timeoutMs });

  let counter = 0;
  const phase = async (ms: number, record: boolean) => {
    const latencies = record ? new Float64Array(maxRequests) : null;
    const statuses: Record<string, number> = {};
    let n = 0;
    let bytes = 0;
    const end = performance.now() + ms;
    const worker = async (_: unknown, w: number) => {
      while (performance.now() < end && n < maxRequests) {
        const req = opts.next(counter++);
        const t0 = performance.now();
        const a = await transport.send(w, req);
        const dt = performance.now() - t0;
        if (!record) continue;
        if (n >= maxRequests) break;
        latencies![n++] = dt;
        bytes += a.bytes;
        const key = a.status < 0 ? 'error' : String(a.status);
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    };
    const cpu0 = process.cpuUsage();
    const srv0 = opts.serverPid ? processCpuMs(opts.serverPid) : null;
    const busy0 = machineBusyMs();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const srv1 = opts.serverPid ? processCpuMs(opts.serverPid) : null;
    const busy1 = machineBusyMs();
    const clientCpuMs = (cpu.user + cpu.system) / 1000;
    const serverCpuMs = srv0 !== null && srv1 !== null ? srv1 - srv0 : null;
    const otherCpuMs = busy0 !== null && busy1 !== null && serverCpuMs !== null ? Math.max(0, busy1 - busy0 - clientCpuMs - serverCpuMs) : null;
    return { latencies: latencies?.subarray(0, n), statuses, n, bytes, seconds, clientCpuMs, serverCpuMs, otherCpuMs };
  };

  try {
    if ((opts.warmupMs ?? 2000) > 0) await phase(opts.warmupMs ?? 2000, false);
    const m = await phase(opts.durationMs, true);
    const sorted = m.latencies!.slice().sort();
    return {
      requests: m.n,
      seconds: round(m.seconds, 2),
      rps: round(m.n / m.seconds, 0),
      p50Ms: round(percentile(sorted, 0.5), 2),
      p90Ms: round(percentile(sorted, 0.9), 2),
      p99Ms: round(percentile(sorted, 0.99), 2),
      maxMs: round(sorted.length ? sorted[sorted.length - 1] : NaN, 2),
      statuses: m.statuses,
      meanResponseBytes: m.n ? Math.round(m.bytes / m.n) : 0,
      clientCpuPct: round((100 * m.clientCpuMs) / (m.seconds * 1000), 0),
      serverCpuPct: m.serverCpuMs === null ? null : round((100 * m.serverCpuMs) / (m.seconds * 1000), 0),
      otherCpuPct: m.otherCpuMs === null ? null : round((100 * m.otherCpuMs) / (m.seconds * 1000), 0),
    };
  } finally {
    transport.close();
  }
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1];
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * utime + stime of a process and every descendant alive now (a `serve --workers N` primary and its workers),
 * from /proc/<pid>/stat, in ms; null off Linux or when the process is gone.
 */
function processCpuMs(pid: number): number | null {
  const own = ownCpuMs(pid);
  if (own === null) return null;
  return descendantsOf(pid).reduce((sum, child) => sum + (ownCpuMs(child) ?? 0), own);
}

/** pids of every live descendant of `pid` (Linux /proc; empty elsewhere). */
export function descendantsOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

function ownCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after the closing parenthesis are fixed.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]); // fields 14 and 15: utime, stime
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Busy time of all cores together (everything but idle and iowait) from /proc/stat, in ms; null off Linux. */
export function machineBusyMs(): number | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …: guest time is already inside user.
    const busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0);
    return (busy * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

// USER_HZ is 100 on every mainstream Linux build; /proc reports times in it.
const CLOCK_TICKS = 100;
