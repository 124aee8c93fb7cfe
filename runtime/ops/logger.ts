// The runtime's structured log (pino): one JSON line per request (the access log) and one per server-side failure,
// on stdout, where a container platform collects it. Startup lines stay plain text on stderr.
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options of createLogger. */
export interface LoggerOptions {
  /** A file descriptor or path to write to. Default 1 (stdout). */
  destination?: number | string;
  /**
   * Write each line at once (true), or buffer up to 4 KiB and write in the background (false, default: a line per
   * request at tens of thousands of requests a second must not cost a system call each). close() flushes.
   */
  sync?: boolean;
  /**
   * When buffering, write out what is buffered at least this often (default FLUSH_EVERY_MS), so a quiet server's
   * lines show within a second rather than when 4 KiB have gathered or at exit.
   */
  flushEveryMs?: number;
}

/** How long a buffered line may wait: an operator tailing a quiet preview sees each request within a second. */
export const FLUSH_EVERY_MS = 1000;

/** A pino logger with ISO times and text levels: `{"level":"info","time":"…","pid":…,…}`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const sync = options.sync ?? false;
  // sonic-boom's periodic flush is an unref'd timer: it never keeps the process alive, and costs one write a second.
  const destination = pino.destination({ dest: options.destination ?? 1, sync, minLength: sync ? 0 : 4096, ...(sync ? {} : { periodicFlush: options.flushEveryMs ?? FLUSH_EVERY_MS }) });
  return pino(
    {
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
