// The runtime's problem log seam: one plain function that takes one record per event. The default writes the line to
// stderr; a deployment may pass its own (a structured logger) through the app and server options.

/** One thing worth an operator's attention. `line` is the whole human-readable line; the rest are its facts. */
export interface LogRecord {
  level: 'error' | 'warn';
  /**
   * What happened: `artefact_corrupt`, `upstream_unavailable` (a mirror's origin stopped answering),
   * `upstream_available` (it answers again), `internal_error`, `release_unavailable`, `refund_failed`, …
   */
  event: string;
  line: string;
  /** The file or URL concerned, when there is one (never a key or a credential). */
  file?: string;
  /** The check that failed, or the reason. */
  check?: string;
}

/** Where log records go. */
export type ProblemLog = (record: LogRecord) => void;

/** The default: each record's line on stderr. */
export const stderrProblemLog: ProblemLog = (r) => {
  process.stderr.write(`${r.line}\n`);
};
