// The changelog routes: /changes/releases, /changes/summary and /changes. Windows walk the prior links between
// two compiled releases; pages come from the compiler's pre-paged streams. Free, with strong ETags and 304s.
import { sha256, toBase64url } from '#platform/crypto';
import { CHANGE_EVENT_TYPES, type DistIndex } from '../../common/dist-layout.ts';
import { fnv1a32 } from '../../common/hash.ts';
import { ApiError } from '../api-error.ts';
import { changelogResponses } from '../contract/http-parts.ts';
import { ChangesLimit, Cursor, EventTypeFilter, From, IfNoneMatch, ProviderFilter, Since, To } from '../contract/parameters.ts';
import { parameterReader } from '../contract/request-check.ts';
import { ChangeReleasesResponse, ChangesPage, ChangesSummaryResponse } from '../contract/schemas.ts';
import type { Release } from '../release/open-release.ts';
import { matchesEtag } from '../response-headers.ts';
import { defineRoute, type Reply, type RequestContext, type RouteDef } from '../route.ts';

/** Releases this namespace can show: every compiled release up to the one it serves. */
async function visible(c: RequestContext): Promise<DistIndex['releases']> {
  const index = await c.services.catalog.current();
  if (!index) return [];
  return index.releases.filter((r) => r.stamp <= c.release.stamp);
}

/** A window bound the schema admitted: it must also be a release this namespace shows. */
function published(name: string, v: string | null, known: Set<string>): string | null {
  if (v !== null && !known.has(v)) throw new ApiError(400, 'unknown_stamp', `${name} is not a published release stamp.`, { detail: v.slice(0, 32) });
  return v;
}

interface Window {
  since: string | null;
  /** Where the window starts: `from`, or `since`, which is another way to write it. */
  from: string | null;
  /** Where it ends: `to`, else the latest release of the namespace. */
  to: string;
  chain: Release[];
}

type Bounds = { since: string | null; from: string | null; to: string | null };

async function window(c: RequestContext, bounds: Bounds): Promise<Window> {
  const list = await visible(c);
  const known = new Set(list.map((r) => r.stamp));
  const since = published('since', bounds.since, known);
  const from = published('from', bounds.from, known);
  const to = published('to', bounds.to, known);
  if (since !== null && from !== null && since !== from) throw new ApiError(400, 'invalid_parameter', 'since is another way to write from: give one, or both the same.');
  const start = since ?? from;
  const until = to ?? c.release.stamp;
  if (start !== null && start > until) throw new ApiError(400, 'invalid_range', 'The window starts after it ends.');
  const priorOf = new Map(list.map((r) => [r.stamp, r.prior]));
  // Walk back from `until` along prior links to the start (exclusive); without a start, just `until`.
  const stamps: string[] = [];
  if (start === null) stamps.push(until);
  else if (start !== until) {
    let s: string | null = until;
    while (s !== null && s !== start) {
      stamps.push(s);
      s = priorOf.get(s) ?? null;
    }
    if (s !== start) throw new ApiError(400, 'invalid_range', `${start} is not an earlier release in the chain of ${until}.`);
  }
  stamps.reverse();
  const chain = await Promise.all(stamps.map((s) => c.services.catalog.release(s)));
  return { since, from: start, to: until, chain };
}

function windowFields(w: Window): string {
  const counts: Record<string, number> = {};
  for (const t of CHANGE_EVENT_TYPES) counts[t] = 0;
  const releases = w.chain.map((r) => {
    for (const t of CHANGE_EVENT_TYPES) counts[t] += r.doc.changes.counts[t] ?? 0;
    return { stamp: r.stamp, counts: typeCounts(r) };
  });
  return (
    `"since":${JSON.stringify(w.since)},"from":${JSON.stringify(w.from)},"to":${JSON.stringify(w.to)},"until":${JSON.stringify(w.to)},` +
    `"chain":${JSON.stringify(w.chain.map((r) => r.stamp))},"releases":${JSON.stringify(releases)},"counts":${JSON.stringify(counts)}`
  );
}

function typeCounts(r: Release): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of CHANGE_EVENT_TYPES) counts[t] = r.doc.changes.counts[t] ?? 0;
  return counts;
}

function withEtag(c: RequestContext, body: string): Reply {
  const etag = `"${toBase64url(sha256(body)).slice(0, 27)}"`;
  const headers = { etag, 'cache-control': 'private, no-cache' };
  if (matchesEtag(c.request.headers.get('if-none-match'), etag)) return { status: 304, body: null, headers };
  return { status: 200, body, headers };
}

const WINDOW = [Since, From, To] as const;
const SUMMARY_PARAMETERS = [...WINDOW, IfNoneMatch] as const;
const PAGE_PARAMETERS = [...WINDOW, EventTypeFilter, ProviderFilter, ChangesLimit, Cursor, IfNoneMatch] as const;
const readSummary = parameterReader(SUMMARY_PARAMETERS);
const readPage = parameterReader(PAGE_PARAMETERS);
const STRONG_ETAG = 'Strong ETag; a matching `If-None-Match` gets 304.';

export const changesRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/changes/releases',
    auth: true,
    operation: {
      operationId: 'listReleases',
      tag: 'changelog',
      summary: 'Published releases, newest first',
      description: `No cost. ${STRONG_ETAG}`,
      cost: 0,
      parameters: [IfNoneMatch],
      responses: changelogResponses(ChangeReleasesResponse, null),
    },
    prepare(c) {
      return {
        async run() {
          const list = (await visible(c)).slice().reverse();
          const releases = [];
          for (const r of list) {
            const rel = await c.services.catalog.release(r.stamp);
            releases.push({ stamp: r.stamp, prior: r.prior, generated_at: r.generated_at, counts: typeCounts(rel) });
          }
          return withEtag(c, JSON.stringify({ latest: c.release.stamp, releases }));
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/changes/summary',
    auth: true,
    operation: {
      operationId: 'getChangesSummary',
      tag: 'changelog',
      summary: 'Event counts for a window of releases (the cheap poll)',
      description:
        'No cost. The window is `since` (changes after it, up to the latest) or `from`/`to` (any two published ' +
        `releases). ${STRONG_ETAG}`,
      cost: 0,
      parameters: SUMMARY_PARAMETERS,
      responses: changelogResponses(ChangesSummaryResponse, [...readSummary.codes, 'invalid_range']),
    },
    async prepare(c) {
      const w = await window(c, readSummary(c));
      return { run: async () => withEtag(c, `{${windowFields(w)}}`) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/changes',
    auth: true,
    operation: {
      operationId: 'listChanges',
      tag: 'changelog',
      summary: 'Pages of change events',
      description: `No cost. Same window as \`/changes/summary\`, filtered by \`type\` and \`provider\`, paged by an opaque cursor. ${STRONG_ETAG}`,
      cost: 0,
      parameters: PAGE_PARAMETERS,
      responses: changelogResponses(ChangesPage, [...readPage.codes, 'invalid_range', 'stale_cursor']),
    },
    async prepare(c) {
      const p = readPage(c);
      const w = await window(c, p);
      const { type, provider, limit, cursor } = p;
      const filterKey = fnv1a32(JSON.stringify([w.since, w.from, w.to, type, provider])).toString(36);
      let at = { i: 0, o: 0 };
      if (cursor !== null) {
        const m = /^([0-9a-z]+)\.(\d{1,4})\.(\d{1,9})$/.exec(cursor);
        if (!m) throw new ApiError(400, 'invalid_parameter', 'cursor is not a cursor this API issued.');
        if (m[1] !== filterKey) throw new ApiError(400, 'stale_cursor', 'This cursor belongs to a different window or filter.');
        at = { i: Number(m[2]), o: Number(m[3]) };
      }
      // provider_updated is the only event that names a provider; any other type with a provider filter is empty.
      const stream = provider !== null ? (type === null || type === 'provider_updated' ? `provider:${provider}` : null) : type !== null ? `type:${type}` : 'all';
      return {
        async run() {
          let matched = 0;
          for (const r of w.chain) matched += stream ? (r.changeStream(stream)?.total ?? 0) : 0;
          const events: string[] = [];
          let i = at.i;
          let o = at.o;
          while (stream && i < w.chain.length && events.length < limit) {
            const s = w.chain[i].changeStream(stream);
            if (!s || o >= s.total) {
              i++;
              o = 0;
              continue;
            }
            while (o < s.total && events.length < limit) events.push((await s.reader.at<string>(o++))!);
          }
          // Skip past exhausted releases so the last page says next_cursor: null.
          while (stream && i < w.chain.length && o >= (w.chain[i].changeStream(stream)?.total ?? 0)) {
            i++;
            o = 0;
          }
          const next = stream && i < w.chain.length ? `${filterKey}.${i}.${o}` : null;
          const body =
            `{${windowFields(w)},"type":${JSON.stringify(type)},"provider":${JSON.stringify(provider)},"events":[${events.join(',')}],` +
            `"matched":${matched},"next_cursor":${JSON.stringify(next)}}`;
          return withEtag(c, body);
        },
      };
    },
  }),
];
