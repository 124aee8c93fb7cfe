// What stage 1 (compiler/stages/tables/) hands the stages after it: the partitioned rows, the resolve records, the
// redirects and the release-wide tables small enough to hold.
import type { GroupSpill } from '../write/group-spill.ts';
import type { LineLayout } from './partition-lines.ts';

/** What the redirects table says about one retired ID. */
export interface RedirectInfo {
  /** Final survivor (chains followed), or null for a tombstone. */
  to: string | null;
  reason: string;
}

export interface TablesRead {
  /**
   * Per-entity rows by partition, as partition lines (compiler/records/partition-lines.ts); one spill per reading
   * thread, always in the same order. Lines of one ID may sit in any of them.
   */
  spills: GroupSpill[];
  /** Resolve records (compiler/records/resolve-records.ts) grouped by key hash, written straight from the bridges pass. */
  resolve: GroupSpill;
  /** How to read each tag's lines: its table's columns. */
  layouts: Map<string, LineLayout>;
  /** Estimated bytes of the resolve family's entries, which its bucket count is chosen from. */
  resolveBytes: number;
  redirects: Map<string, RedirectInfo>;
  priorRedirects: Map<string, RedirectInfo>;
  /** provider → role from csv/providers.csv.gz. */
  providerRoles: Map<string, string>;
  /** Every provider seen in bridges or overlay IDs. */
  providers: Set<string>;
  coverage: [string, string, string][];
}
