// The runtime's structured log: one JSON line per request (the access log) and one per server-side failure, on
// stdout, where a container platform collects it. Startup lines stay plain text on stderr.
//
// Access lines are written in pino's line format but not through pino: its per-call work and sonic-boom's per-write
// bookkeeping came to ~8 µs a line, a fifth of a cached entity answer's CPU (bench/HISTORY.md, issue 41). A line is
// one template string; lines gather and go out in one write per 64 KiB or per 100 ms, off the request path.
// Failure lines, rare, still go through pino, into the same sink, so lines never interleave.
import { openSync, writeSync } from 'node:fs';
import { pino } from 'pino';

/** Options of createLogger. */
export interface LoggerOptions {
  /** A file descriptor or path to write to. Default 1 (stdout). */
  destination?: number | string;
  /** Write each line at once (true), or gather lines and write them in the background (false, default). */
  sync?: boolean;
}

/** One answered request, as its access-log line states it. */
export interface AccessEntry {
  method: string;
  /** Without the query, which may hold what a log must not. */
  path: string;
  route: string;
  status: number;
  duration_ms: number;
  bytes: number;
  key_id: string | null;
  request_id: string;
  error?: string;
}

export interface Logger {
  /** A failure record: its facts as fields and its line as `msg`. */
  error(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  /** One access-log line: `{"level":"info","time":…,"pid":…,…entry}`. */
  access(entry: AccessEntry): void;
  /** Writes out what is gathered, then calls `done`. */
  flush(done: () => void): void;
}

/** A pino-format logger: ISO times and text levels, `{"level":"info","time":"…","pid":…,…}`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const sink = new LineSink(options.destination ?? 1, options.sync ?? false);
  const failures = pino({ base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, sink);
  const pid = process.pid;
  // The time text changes once a millisecond, and routes, methods and key IDs are few: each is made once, not per line.
  let lastMs = -1;
  let lastTime = '';
  const quoted = new Map<string, string>();
  const quote = (s: string): string => {
    let q = quoted.get(s);
    if (q === undefined) {
      if (quoted.size >= 4096) quoted.clear();
      quoted.set(s, (q = JSON.stringify(s)));
    }
    return q;
  };
  return {
    error: (fields, msg) => failures.error(fields, msg),
    warn: (fields, msg) => failures.warn(fields, msg),
    access(e) {
      const now = Date.now();
      if (now !== lastMs) lastTime = new Date((lastMs = now)).toISOString();
      const error = e.error === undefined ? '' : `,"error":${quote(e.error)}`;
      sink.write(
        `{"level":"info","time":"${lastTime}","pid":${pid},"method":${quote(e.method)},"path":${JSON.stringify(e.path)},"route":${quote(e.route)},` +
          `"status":${e.status},"duration_ms":${e.duration_ms},"bytes":${e.bytes},"key_id":${e.key_id === null ? 'null' : quote(e.key_id)},"request_id":${JSON.stringify(e.request_id)}${error}}\n`,
      );
    },
    flush: (done) => sink.flush(done),
  };
}

/**
 * A stream of whole lines to one file descriptor. In the background, lines gather until WRITE_AT_CHARS or for at
 * most WRITE_EVERY_MS, then go out in one write: a write per event-loop tick was still a system call per one to
 * three answers on a saturated machine, ~11 µs each here. The write is synchronous: handing it to libuv's thread
 * pool cost more on the event loop (waking a thread) than the write itself, measured.
 */
class LineSink {
  private readonly fd: number;
  private pending = '';
  /** What a full pipe did not take yet, before `pending`. */
  private rest: Buffer | null = null;
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private failed = false;

  constructor(
    destination: number | string,
    private readonly sync: boolean,
  ) {
    this.fd = typeof destination === 'number' ? destination : openSync(destination, 'a');
  }

  write(text: string): boolean {
    this.pending += text;
    if (this.sync) this.drain();
    else if (this.pending.length >= WRITE_AT_CHARS) {
      // Written after the tick's answers, not on the request that filled it.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.drain);
      }
    } else if (this.timer === null) {
      this.timer = setTimeout(this.drain, WRITE_EVERY_MS);
      // A quiet server exits without waiting for it: close() flushes.
      this.timer.unref();
    }
    return true;
  }

  flush(done: () => void): void {
    this.drain();
    if (this.pending === '' && this.rest === null) return done();
    setTimeout(() => this.flush(done), RETRY_MS);
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending === '' && this.rest === null) return;
    const bytes = this.rest ? Buffer.concat([this.rest, Buffer.from(this.pending)]) : Buffer.from(this.pending);
    this.pending = '';
    this.rest = null;
    let at = 0;
    try {
      while (at < bytes.length) at += writeSync(this.fd, bytes, at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
        // A full pipe: keep the rest for when its reader has caught up.
        this.rest = bytes.subarray(at);
        this.timer = setTimeout(this.drain, RETRY_MS);
        this.timer.unref();
        return;
      }
      // The destination refuses (a closed pipe): say so once, and drop the lines rather than stop the server.
      if (!this.failed) process.stderr.write(`[serve] log lines could not be written: ${(e as Error).message}\n`);
      this.failed = true;
    }
  };
}

/** How long a write that found its pipe full waits before it tries again, ms. */
const RETRY_MS = 10;
/** Gathered lines are written once they reach this many characters… */
const WRITE_AT_CHARS = 64 * 1024;
/** …or once the first of them has waited this long, ms: a quiet server's lines show at once to an operator. */
const WRITE_EVERY_MS = 100;
