// Stage 1's reading of the redirects table: each row held to the format's two kinds, chains followed to the final
// survivor, a cycle refused.
import { readCsvRecords, columnIndex } from '../../read/csv-reader.ts';
import { RegisterError } from '../../../common/errors.ts';
import type { CompileContext } from '../../context.ts';
import type { ReleaseInput } from '../../read/release-input.ts';
import { capsOf } from '../../read/cell-caps.ts';
import type { RedirectInfo } from '../../records/tables-read.ts';
import { checkId } from './table-reader.ts';

/** Reads redirects: merges (chains followed to the final survivor) and tombstones. A cycle is an error. */
export async function readRedirects(rel: ReleaseInput, ctx: CompileContext | null): Promise<Map<string, RedirectInfo>> {
  const raw = new Map<string, { to: string; reason: string; row: number }>();
  const t = rel.tables.redirects;
  if (!t) return new Map();
  const label = ctx ? t.label : `${rel.stamp}/${t.label}`;
  let c: Record<string, number> = Object.create(null);
  await readCsvRecords(t.path, label, {
    caps: (h) => capsOf('redirects', h),
    header: (h) => {
      c = columnIndex(h, ['from_id', 'to_id', 'reason'], label);
    },
    record: (f, row) => {
      const from = f.text(c.from_id);
      const to = f.text(c.to_id);
      const reason = f.text(c.reason);
      // The predecessor's rows were checked when it was compiled; only this release's are held to the rules.
      if (ctx) {
        checkId(from, label, row);
        if (to !== '') checkId(to, label, row);
        checkRedirect(from, to, reason, label, row);
        if (raw.has(from)) throw new RegisterError('compile', `register ID ${from} is redirected twice`, label, row);
      }
      raw.set(from, { to, reason, row });
    },
  });
  const out = new Map<string, RedirectInfo>();
  for (const [from, r] of raw) {
    if (r.to === '') {
      out.set(from, { to: null, reason: r.reason });
      continue;
    }
    // Follow the chain; a repeat means a cycle, which would leave an ID resolving nowhere.
    const seen = new Set([from]);
    let to = r.to;
    let tomb = false;
    for (let next = raw.get(to); next; next = raw.get(to)) {
      if (seen.has(to)) throw new RegisterError('compile', `redirect cycle through ${[...seen].join(' → ')} → ${to}`, label, r.row);
      seen.add(to);
      if (next.to === '') {
        tomb = true;
        break;
      }
      to = next.to;
    }
    out.set(from, tomb ? { to: null, reason: r.reason } : { to, reason: r.reason });
  }
  return out;
}

/**
 * A redirect row must be one of the two kinds the format has: a merge (`merged`, to the survivor's ID) or a
 * tombstone (`de_corroborated`, with no target). Anything else would publish an ID whose fate is a guess.
 */
function checkRedirect(from: string, to: string, reason: string, label: string, row: number): void {
  const fail = (why: string): never => {
    throw new RegisterError('compile', why, label, row);
  };
  if (reason === 'merged') {
    if (to === '') fail(`merged redirect of ${from} has no to_id`);
    if (to === from) fail(`redirect cycle: ${from} redirects to itself`);
  } else if (reason === 'de_corroborated') {
    if (to !== '') fail(`de_corroborated redirect of ${from} names to_id ${to}; a tombstone has none`);
  } else {
    fail(`redirect of ${from} has reason ${JSON.stringify(reason)}; it must be merged (with a to_id) or de_corroborated (without)`);
  }
}

