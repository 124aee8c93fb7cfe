// One page of /matches: the anchors resolved, the smallest anchor's lists walked from the cursor's position, the
// other anchors asked of each entry's digests, the filters checked on the row copies left, and the page cut at its
// row limit, its byte cap or its budget of examined entries.
import { anchorDigest, MATCH_ROW, metaHome, metaState, type MatchRowValue } from '../../common/match-index.ts';
import { jsonString } from '../../common/json-string.ts';
import { ApiError } from '../api-error.ts';
import type { MatchIndex } from '../release/match-index.ts';
import type { Release } from '../release/open-release.ts';
import { resolveAnchor, type Resolved } from './match-anchors.ts';
import { MAX_CURSOR_CHARS, type CursorSigner } from './match-cursor.ts';
import { ANCHORS, type AnchorKind, type MatchQuery } from './match-query.ts';
import { PageWriter, rowText, type RowFilter } from './match-row.ts';
import { isPromise } from '../interfaces.ts';
import { MatchWalk, type WalkEntry } from './match-walk.ts';

/**
 * List entries one page may examine. Rows are read only for entries that pass the state filter, so a page's reads
 * stay bounded whatever the filters; a selective filter may give a short (even empty) page with a next_cursor.
 */
export const MAX_EXAMINED = 1000;

/** Bytes of `s` in UTF-8, as TextEncoder would write it (a lone surrogate as U+FFFD, three bytes). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

/** How a page is walked. */
export interface PageOptions {
  /**
   * Ask each entry's digests for the other anchors before reading its row, and end a page that can take no row
   * without reading its entries (default); false reads and checks the row of every examined entry. The answer is the
   * same either way.
   */
  digests: boolean;
  /** List entries a page may examine (default MAX_EXAMINED; tests set it lower to reach its end on a small release). */
  examined: number;
}
const DEFAULT_OPTIONS: PageOptions = { digests: true, examined: MAX_EXAMINED };

/**
 * The other anchors of a page, as 16-bit digests (anchorDigest) to ask of a list entry's: an entry that misses
 * any of them cannot pass. Up to five values each, so a scan of a short array.
 */
interface DigestFilter {
  teams: number[] | null;
  competitions: number[] | null;
  seasons: number[] | null;
  opponent: number | null;
}

function digestsMayPass(f: DigestFilter, sides: number, structure: number): boolean {
  const home = sides >>> 16;
  const away = sides & 0xffff;
  if (f.teams !== null && !f.teams.includes(home) && !f.teams.includes(away)) return false;
  if (f.competitions !== null && !f.competitions.includes(structure >>> 16)) return false;
  if (f.seasons !== null && !f.seasons.includes(structure & 0xffff)) return false;
  return f.opponent === null || home === f.opponent || away === f.opponent;
}

/** One page's body. */
export async function matchPage(
  release: Release, index: MatchIndex, generation: string, q: MatchQuery, signer: CursorSigner, now: number, maxBytes: number, options: PageOptions = DEFAULT_OPTIONS,
): Promise<string | Uint8Array> {
  const unresolved: string[] = [];
  const resolved = {} as Record<AnchorKind, Resolved[]>;
  for (const kind of ANCHORS) {
    resolved[kind] = [];
    for (const r of q.anchors[kind]) {
      const a = await resolveAnchor(release, index, kind, r);
      if (a) resolved[kind].push(a);
      else unresolved.push(r.text);
    }
  }
  let opponent: string | null = null;
  if (q.opponent) {
    const o = await resolveAnchor(release, index, 'team', q.opponent);
    if (o) opponent = o.id;
    else unresolved.push(q.opponent.text);
  }
  // The envelope around `rows` (written by the caller when `count` is given).
  const tail = (rows: string[], cursor: string | null, count = rows.length) =>
    `{"matches":[${rows.join(',')}],"count":${count},"generation":"${generation}","unresolved":${JSON.stringify(unresolved)},"next_cursor":${cursor === null ? 'null' : jsonString(cursor)}}`;
  // A value that resolves to nothing makes the page empty: the intersection with nothing is nothing.
  if (unresolved.length) return tail([], null);

  // The smallest anchor drives the walk; the others' lists are asked for each entry, and their IDs checked on each row read.
  const given = ANCHORS.filter((k) => resolved[k].length > 0);
  const size = (k: AnchorKind) => resolved[k].reduce((n, a) => n + a.list.count, 0);
  const driver = given.reduce((best, k) => (size(k) < size(best) ? k : best));
  const sets = Object.fromEntries(given.filter((k) => k !== driver).map((k) => [k, new Set(resolved[k].map((a) => a.id))])) as Partial<Record<AnchorKind, Set<string>>>;
  const team = resolved.team.length === 1 ? resolved.team[0].id : null;
  // A provider no row bridges, required: no row can pass, so none is read (the walk and its cursor stay as they are).
  const impossible = q.require.some((p) => !index.bridgesSomewhere(p));
  const walkOptions = { sort: q.sort, fromDay: q.fromDay, toDay: q.toDay, after: q.after };
  const walk = new MatchWalk(index, resolved[driver].map((a) => a.list), walkOptions);
  // The other anchors, asked of each entry's digests before its row is read: an entry whose digests miss one of
  // them cannot pass, so an empty intersection reads (nearly) no row. The row check below stays, so the answer is the
  // same either way.
  const digestsOf = (k: AnchorKind): number[] | null => (sets[k] ? [...sets[k]].map(anchorDigest) : null);
  const digests: DigestFilter | null = options.digests && !impossible
    ? { teams: digestsOf('team'), competitions: digestsOf('competition'), seasons: digestsOf('season'), opponent: opponent === null ? null : anchorDigest(opponent) }
    : null;
  await walk.open();

  // Filters only a row can answer: without them a row is written from its stored bytes, never decoded.
  const rowFilters = Object.keys(sets).length > 0 || opponent !== null || (team !== null && q.venue !== 'any') || q.require.length > 0 || q.missing.length > 0;
  const providerIndex = (p: string) => index.doc.providers.indexOf(p);
  const filter: RowFilter = {
    teams: sets.team ? [...sets.team] : null,
    competitions: sets.competition ? [...sets.competition] : null,
    seasons: sets.season ? [...sets.season] : null,
    team,
    venue: q.venue,
    opponent,
    require: q.require.map(providerIndex),
    // A provider no row names excludes nothing.
    missing: q.missing.map(providerIndex).filter((i) => i >= 0),
  };
  if (impossible && options.digests) {
    // No entry can be taken, so the page is empty and stops where its budget of examined entries runs out.
    const stop = walk.nth(options.examined);
    if (stop !== undefined) {
      const last = isPromise(stop) ? await stop : stop;
      return tail([], last ? signer.issue(generation, q.filters(), { day: last.day, ordinal: last.ordinal }, now) : null);
    }
  }
  const out = new PageWriter(index, q.providers);
  out.text('{"matches":[');
  const head = out.pos;
  // Bytes of everything but the rows, with the longest cursor and count: a page never passes the cap.
  const envelope = utf8Length(tail([], '')) + MAX_CURSOR_CHARS + 3;
  let count = 0;
  let last: WalkEntry | null = null;
  let examined = 0;
  let exhausted = false;
  let capped = false;
  while (count < q.limit && examined < options.examined) {
    const next = walk.next();
    const e = isPromise(next) ? await next : next;
    if (e === null) {
      exhausted = true;
      break;
    }
    examined++;
    const previous = last;
    last = e;
    if (q.states && !q.states.has(metaState(e.meta))) continue;
    // On the team's own list the side is in the entry; otherwise the row says.
    if (driver === 'team' && team !== null && q.venue !== 'any' && metaHome(e.meta) !== (q.venue === 'home')) continue;
    if (impossible) continue;
    if (digests !== null && !digestsMayPass(digests, e.sides, e.structure)) continue;
    let row: MatchRowValue | null = null;
    const before = out.pos;
    const found = e.reader.copyOf(e);
    const copy = isPromise(found) ? await found : found;
    const maybe = index.rowBytes(copy);
    const stored = isPromise(maybe) ? await maybe : maybe;
    if (!out.anchorsMayPass(stored, filter)) continue;
    if (out.read(stored)) {
      if (rowFilters && !out.passes(filter)) continue;
      const written = out.write(count > 0);
      if (written) await written;
    } else {
      // A row the byte reader does not take is decoded, checked and written as text.
      row = await index.row(copy);
      if (rowFilters && !rowPasses(row, sets, team, opponent, q, index)) continue;
      const made = rowText(row, generation, index, q.providers);
      out.text(`${count > 0 ? ',' : ''}${typeof made === 'string' ? made : await made}`);
    }
    if (envelope + (out.pos - head) > maxBytes) {
      if (count === 0) {
        const id = (row ?? (await index.row(copy)))[MATCH_ROW.id];
        throw new ApiError(503, 'match_response_too_large', `Match ${id} alone is larger than the ${maxBytes}-byte page cap; nothing was charged.`, { detail: id });
      }
      // This row starts the next page.
      out.rewind(before);
      last = previous;
      capped = true;
      break;
    }
    count++;
  }
  // A page that stopped early (limit, cap or examined budget) continues only if an entry is left.
  const more = !exhausted && last !== null && (capped || (await walk.more()));
  const cursor = more && last ? signer.issue(generation, q.filters(), { day: last.day, ordinal: last.ordinal }, now) : null;
  out.text(tail([], cursor, count).slice(head));
  return out.bytes();
}

/** The anchors other than the driver, the opponent, the venue and the provider filters, on one row. */
function rowPasses(row: MatchRowValue, sets: Partial<Record<AnchorKind, Set<string>>>, team: string | null, opponent: string | null, q: MatchQuery, index: MatchIndex): boolean {
  const home = row[MATCH_ROW.home];
  const away = row[MATCH_ROW.away];
  const competition = row[MATCH_ROW.competition];
  const season = row[MATCH_ROW.season];
  if (sets.team && !((home !== null && sets.team.has(home)) || (away !== null && sets.team.has(away)))) return false;
  if (sets.competition && (competition === null || !sets.competition.has(competition))) return false;
  if (sets.season && (season === null || !sets.season.has(season))) return false;
  if (team !== null && q.venue !== 'any' && (q.venue === 'home' ? home : away) !== team) return false;
  if (opponent !== null && (home === team ? away : away === team ? home : null) !== opponent) return false;
  if (q.require.length || q.missing.length) {
    const bridged = new Set<string>();
    const b = row[MATCH_ROW.bridges];
    for (let i = 0; i < b.length; i += 3) bridged.add(index.provider(b[i] as number));
    if (!q.require.every((p) => bridged.has(p))) return false;
    if (q.missing.some((p) => bridged.has(p))) return false;
  }
  return true;
}

