// The damage suite: for every kind of file a compiled stamp holds, public and private, and for index.json, each
// kind of damage (zeroed bytes, a flipped byte, truncation to half, deletion) is applied to a copy of the dist. A
// runtime on the damaged copy answers the same requests as one on the pristine dist, and every answer is either
// byte-identical to the pristine one or a 503 Error body (a batch: item by item) that charged nothing. Whenever
// the pristine run read a byte the damage changed, the damaged run must have noticed (a 503 somewhere), and each
// artefact_corrupt answer wrote one log line naming the damaged file. In-process for the many cases, over a mirror
// (HTTP source) for a representative subset, and over real HTTP for a few.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseDoc } from '../../common/dist-layout.ts';
import { listStamps } from '../../compiler/compile.ts';
import { verifyDist, verifyStamp } from '../../compiler/dist-manifest.ts';
import { openIndex } from '../../common/index-file.ts';
import type { KeyStore, ShardSource } from '../../runtime/interfaces.ts';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import type { LogRecord } from '../../runtime/problem-log.ts';
import { buildApp, startRuntime, type Runtime } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createHttpSource } from '../../runtime/source/http-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { quotaPeriod } from '../../runtime/state/quota-period.ts';
import { client } from '../helpers/api-client.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { ID, STAMPS } from '../fixtures/hand-world.ts';
import { DAMAGE_KINDS, damagedCopy, filesUnder, ReadLog, recording, removeCopy, type Damage, type DamageKind } from './support/damage.ts';
import { FUZZ_START, keyId, makeFuzzWorld, type FuzzWorld } from './support/reliability-world.ts';

/** The stamp whose files are damaged: /api/v1 serves it, and /api/next's changelog walks through it. */
const STAMP = STAMPS[1];
const clock = { now: () => FUZZ_START };

interface Probe {
  ns: 'v1' | 'next';
  method: 'GET' | 'HEAD' | 'POST';
  path: string;
  key: 'partner' | 'opta' | 'fbref';
  body?: unknown;
}

interface Answer {
  status: number;
  body: string;
  headers: Headers;
  /** Credits the request took from its key. */
  charged: number;
}

let world: FuzzWorld;
let keyStore: KeyStore;
let files: string[];
let probes: Probe[];
let pristine: Answer[];
let pristineReads: ReadLog;
let scratch: string;

const get = (ns: Probe['ns'], path: string, key: Probe['key'] = 'partner'): Probe => ({ ns, method: 'GET', path, key });

function probeList(cursor: string, doc: ReleaseDoc): Probe[] {
  const all = 'include=aliases,attributes,bridges,relationships,overlay';
  const streams = Object.keys(doc.changes.streams).map((s) => (s === 'all' ? '/changes?limit=3' : s.startsWith('type:') ? `/changes?type=${s.slice(5)}` : `/changes?provider=${s.slice(9)}`));
  return [
    ...['/', '/meta', '/providers', '/coverage', '/provider-notices/summary', '/openapi.json'].map((p) => get('v1', p)),
    get('v1', `/entities/${ID.arsenal}?${all}`), get('v1', `/entities/${ID.chelsea}`), get('v1', `/entities/${ID.palmer}?include=aliases`),
    get('v1', `/entities/${ID.match}?include=attributes`), get('v1', `/entities/${ID.league}`), get('v1', `/entities/${ID.season}/relationships`),
    get('v1', `/entities/${ID.mergedOld}?include=bridges`), get('v1', `/entities/${ID.lodz}`), get('v1', `/entities/${ID.tomb}`), get('v1', `/entities/${ID.never}`),
    get('v1', `/entities/${ID.arsenal}/bridges`), get('v1', `/entities/${ID.arsenal}/overlay`), get('v1', `/entities/${ID.chelsea}?include=aliases&lang=en`),
    { ns: 'v1', method: 'HEAD', path: `/entities/${ID.palmer}`, key: 'partner' },
    get('v1', '/resolve/transfermarkt/11?namespace=verein&include=bridges'), get('v1', '/resolve/transfermarkt/500?namespace=verein'),
    get('v1', '/resolve/flashscore/palmer-cole%2Fh8agbDt7'), get('v1', '/resolve/fbref/old1'), get('v1', '/resolve/wyscout/w1'),
    get('v1', '/resolve/opta/g1?type=match'), get('v1', '/resolve/transfermarkt/632?namespace=verein'),
    ...['arsenal', 'cole%20pal', 'lodz', 'chelsea&sort=bridges', 'premier%20league', 'the%20gunners'].map((q) => get('v1', `/search?q=${q}`)),
    {
      ns: 'v1', method: 'POST', path: '/batch', key: 'partner',
      body: {
        include: 'bridges',
        requests: [
          ...[ID.arsenal, ID.chelsea, ID.palmer, ID.match, ID.league, ID.season, ID.mergedOld, ID.tomb, ID.never].map((id) => ({ type: 'entity', id })),
          { type: 'resolve', provider: 'transfermarkt', namespace: 'verein', external_id: '11' },
          { type: 'resolve', provider: 'transfermarkt', namespace: 'verein', external_id: '500' },
          { type: 'resolve', provider: 'fbref', external_id: 'old1' },
        ],
      },
    },
    get('v1', `/matches?team=${ID.arsenal}&from=1900-01-01`), get('v1', `/matches?competition=${ID.league}&season=${ID.season}&sort=asc`),
    get('v1', '/changes/releases'), get('v1', '/changes/summary'), get('v1', `/changes/summary?since=${STAMPS[0]}`),
    get('v1', `/changes?limit=3&cursor=${cursor}`), get('v1', `/changes?since=${STAMPS[0]}`),
    ...streams.map((p) => get('v1', p)),
    get('next', '/'), get('next', '/meta'), get('next', '/entities/rp00000000000e77'), get('next', `/entities/${ID.arsenal}?${all}`),
    get('next', '/search?q=saka'), get('next', '/changes/releases'), get('next', `/changes?since=${STAMPS[0]}`), get('next', `/changes?type=label_updated&since=${STAMPS[0]}`),
    { ns: 'v1', method: 'HEAD', path: '/notices', key: 'opta' }, get('v1', '/notices?limit=2', 'opta'), get('v1', '/notices?offset=2', 'opta'), get('v1', '/notices', 'fbref'),
  ];
}

async function credits(store: ReturnType<typeof createMemoryStore>, key: Probe['key']): Promise<number> {
  const id = keyId(world.keys[key]);
  return store.remaining(id, quotaPeriod(FUZZ_START), world.quotas.get(id)!);
}

/** Every probe, in order, against an app over `source` (a fresh state store: nothing seen, nothing charged). */
async function answers(dist: string, source: ShardSource, log: LogRecord[], privateDist: string = dist): Promise<Answer[]> {
  const store = createMemoryStore();
  const built = buildApp({ dist, privateDist, source, store, keyStore, clock, problems: (r) => log.push(r), cursorSecret: 'the damage test signs /matches cursors with this' });
  const out: Answer[] = [];
  try {
    for (const p of probes) {
      const before = await credits(store, p.key);
      const res = await built.app.fetch(
        new Request(`http://127.0.0.1/api/${p.ns}${p.path}`, {
          method: p.method,
          headers: { authorization: `Bearer ${world.keys[p.key]}`, ...(p.body ? { 'content-type': 'application/json' } : {}) },
          body: p.body ? JSON.stringify(p.body) : undefined,
        }),
      );
      const body = await res.text();
      out.push({ status: res.status, body, headers: res.headers, charged: before - (await credits(store, p.key)) });
    }
  } finally {
    await built.close();
    await source.close();
  }
  return out;
}

const UNAVAILABLE = ['artefact_corrupt', 'upstream_unavailable', 'index_unavailable'];
const describeProbe = (p: Probe) => `${p.method} /api/${p.ns}${p.path} (${p.key})`;

/** The same status, body, headers (every name and value, in order) and charge. */
function sameAnswer(a: Answer, b: Answer): boolean {
  if (a.status !== b.status || a.body !== b.body || a.charged !== b.charged) return false;
  return headerLines(a.headers) === headerLines(b.headers);
}
function headerLines(h: Headers): string {
  const lines: string[] = [];
  h.forEach((value, name) => lines.push(`${name}: ${value}`));
  return lines.join('\n');
}

/**
 * Holds a damaged run to the rules; returns how many answers (or batch items) said artefact_corrupt, and whether
 * anything at all was refused.
 */
function judge(d: Damage, got: Answer[], log: LogRecord[], label: string): { corrupt: number; refused: number } {
  let corrupt = 0;
  let refused = 0;
  got.forEach((a, i) => {
    const p = probes[i];
    const where = `${label}: ${describeProbe(p)}`;
    const want = pristine[i];
    // An answer identical to the pristine one, headers and all, was validated as that one (beforeAll).
    if (!sameAnswer(a, want)) validateResponse({ method: p.method, path: `/api/${p.ns}${p.path}`, status: a.status, headers: a.headers, body: a.body });
    if (a.status === 503 && want.status !== 503) {
      refused++;
      // A HEAD has no body to name its code; its log line is allowed for below.
      if (p.method !== 'HEAD') {
        const code = JSON.parse(a.body).error;
        expect(UNAVAILABLE, where).toContain(code);
        if (code === 'artefact_corrupt') corrupt++;
      }
      expect(a.charged, `${where}: a 503 charged`).toBe(0);
      return;
    }
    expect(a.status, where).toBe(want.status);
    if (p.path === '/batch' && a.status === 200 && a.body !== want.body) {
      const [mine, theirs] = [JSON.parse(a.body).results, JSON.parse(want.body).results] as { status: number; body: { error?: string } }[][];
      let failed = 0;
      mine.forEach((item, j) => {
        if (JSON.stringify(item) === JSON.stringify(theirs[j])) return;
        expect(item.status, `${where} item ${j}: ${JSON.stringify(item).slice(0, 200)}`).toBe(503);
        expect(['artefact_corrupt', 'upstream_unavailable'], `${where} item ${j}`).toContain(item.body.error);
        if (item.body.error === 'artefact_corrupt') corrupt++;
        failed++;
      });
      refused += failed;
      expect(a.charged, `${where}: only the answered items are charged`).toBe(want.charged - failed);
      return;
    }
    expect(a.body, where).toBe(want.body);
    expect(a.headers.get('etag'), where).toBe(want.headers.get('etag'));
    // Without a release to name (its files damaged), an answer that needs none (the OpenAPI document) has no stamp.
    if (a.headers.has('x-register-release-stamp')) expect(a.headers.get('x-register-release-stamp'), where).toBe(want.headers.get('x-register-release-stamp'));
    expect(a.headers.get('content-length'), where).toBe(want.headers.get('content-length'));
    expect(a.charged, where).toBe(want.charged);
  });
  // One line per artefact_corrupt answer (a HEAD's included), each naming the damaged file.
  const lines = log.filter((l) => l.event === 'artefact_corrupt');
  const heads = got.filter((a, i) => probes[i].method === 'HEAD' && a.status === 503 && pristine[i].status !== 503).length;
  expect(lines.length, `${label}: log lines ${JSON.stringify(lines.map((l) => l.line))}`).toBeGreaterThanOrEqual(corrupt);
  expect(lines.length, `${label}: log lines`).toBeLessThanOrEqual(corrupt + heads);
  for (const l of lines) expect(l.file, `${label}: ${l.line}`).toMatch(new RegExp(`${d.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  return { corrupt, refused };
}

/** The files damaged in-process: every file of the stamp (each pack, directory, document, manifest, notice batch), and index.json. */
function targets(): string[] {
  // The diff base is hundreds of small files of one kind: two stand for all of them (the runtime never reads it).
  const diffBase = files.filter((f) => f.startsWith(`${STAMP}/private/diff-base/`));
  return [...files.filter((f) => f.startsWith(`${STAMP}/`) && !f.includes('/diff-base/')), ...diffBase.slice(0, 2), 'index.json'];
}

/** Private files the runtime reads only through the notice reader (whose reads the recording source does not see). */
const readWhole = (f: string): boolean => f === `${STAMP}/private/manifest.json` || f.startsWith(`${STAMP}/private/notices/`);

beforeAll(async () => {
  world = await makeFuzzWorld();
  keyStore = openKeyStore({ file: world.keysFile });
  files = filesUnder(world.dist);
  scratch = mkdtempSync(join(tmpdir(), 'ir-damage-'));
  const doc = JSON.parse(readFileSync(join(world.dist, STAMP, 'public', 'release.json'), 'utf8')) as ReleaseDoc;
  // The changelog cursor of the first page, as the pristine runtime issues it.
  probes = [get('v1', '/changes?limit=3')];
  const first = await answers(world.dist, createFsSource({ root: world.dist }), []);
  probes = probeList(JSON.parse(first[0].body).next_cursor, doc);
  pristineReads = new ReadLog();
  const log: LogRecord[] = [];
  pristine = await answers(world.dist, recording(createFsSource({ root: world.dist }), pristineReads), log);
  expect(log).toEqual([]);
  pristine.forEach((a, i) => {
    const p = probes[i];
    validateResponse({ method: p.method, path: `/api/${p.ns}${p.path}`, status: a.status, headers: a.headers, body: a.body });
    expect(a.status, describeProbe(p)).toBeLessThan(500);
  });
});
afterAll(() => {
  keyStore?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (world) rmSync(world.root, { recursive: true, force: true });
});

describe('a damaged dist never answers other bytes', () => {
  it('every file of a stamp and index.json, each damage, in-process: identical answers or a 503 at no charge, noticed whenever read', async () => {
    const seen: string[] = [];
    let cases = 0;
    let noticed = 0;
    for (const file of targets()) {
      const empty = statSync(join(world.dist, file)).size === 0;
      for (const kind of DAMAGE_KINDS) {
        if (empty && kind !== 'delete') continue; // nothing to zero, flip or cut
        const to = join(scratch, `case-${cases++}`);
        const d = damagedCopy(world.dist, files, to, file, kind);
        const log: LogRecord[] = [];
        const label = `${kind} ${file}`;
        const { refused } = judge(d, await answers(to, createFsSource({ root: to }), log), log, label);
        // Whatever the pristine run read of the changed bytes, the damaged run must have refused something.
        const read = d.changed.length > 0 && (pristineReads.touched(d) || readWhole(file) || (kind === 'delete' && pristineReads.whole.has(file)));
        if (read) {
          expect(refused, `${label}: read by the pristine run, yet every answer was the same`).toBeGreaterThan(0);
          noticed++;
        }
        seen.push(`${label}: ${refused ? `${refused} refused` : 'identical'}`);
        removeCopy(to);
      }
    }
    // Every kind of file a stamp holds was damaged, and every one the runtime reads was noticed by some answer.
    for (const kind of ['shards/pack-', 'entities/index-dir-', 'entities/index-', 'resolve/keys-dir-', 'resolve/keys-', 'search/tokens-dir-', 'search/tokens-', 'search/docs-dir-', 'search/docs-', 'changes/all-', 'changes/type-', 'changes/provider-', 'matches/rows-dir-', 'matches/rows-', 'matches/lists-dir-', 'matches/lists-', 'matches/refs-dir-', 'matches/refs-', 'documents/', 'public/release.json', 'public/manifest.json', 'private/manifest.json', 'private/notices/', `${STAMP}/manifest.json`, 'index.json']) {
      expect(seen.some((s) => s.includes(kind) && s.includes('refused')) || kind === `${STAMP}/manifest.json`, `${kind}: ${seen.filter((s) => s.includes(kind)).join('; ')}`).toBe(true);
    }
    console.log(`[damage] ${cases} cases in-process over ${targets().length} files; ${noticed} read by the pristine run and refused by the damaged one`);
  });
});

describe('register verify', () => {
  it('names every damaged file: each kind of pack and directory, the documents, both manifests and the stamp\'s, a notice batch, index.json', async () => {
    const pick = (prefix: string) => files.find((f) => f.startsWith(`${STAMP}/${prefix}`) && statSync(join(world.dist, f)).size > 0)!;
    const targets = [
      ...['public/shards/pack-', 'public/entities/index-dir-', 'public/entities/index-', 'public/resolve/keys-', 'public/search/docs-dir-', 'public/changes/all-', 'public/documents/', 'public/release.json'].map(pick),
      `${STAMP}/public/manifest.json`, `${STAMP}/private/manifest.json`, `${STAMP}/private/notices/opta.json`, `${STAMP}/private/diff-base/meta.json`, `${STAMP}/manifest.json`, 'index.json',
    ];
    const entry = openIndex(readFileSync(join(world.dist, 'index.json'), 'utf8')).releases.find((r) => r.stamp === STAMP)!;
    // Every kind flipped; deletion (one check for any file: listed but missing) for a few.
    const cases: [string, DamageKind][] = [...targets.map((f) => [f, 'flip'] as [string, DamageKind]), [targets[0], 'delete'], [`${STAMP}/private/notices/opta.json`, 'delete'], [`${STAMP}/public/manifest.json`, 'delete'], ['index.json', 'truncate']];
    for (const [file, kind] of cases) {
      const to = join(scratch, 'verify');
      // Real folders (no shared folder links), as verify walks the tree; just the damaged stamp, checked against
      // its index entry, unless the damage is to index.json itself (then the whole dist, from its root).
      const whole = file === 'index.json';
      damagedCopy(world.dist, files, to, file, kind, { linkFolders: false, only: whole ? undefined : (f) => f.startsWith(`${STAMP}/`) });
      const verdict = whole ? await verifyDist(to, await listStamps(to)) : { index: [], stamps: [{ stamp: STAMP, problems: await verifyStamp(join(to, STAMP), entry) }] };
      const lines = [...verdict.index, ...verdict.stamps.flatMap((v) => v.problems.map((p) => `${v.stamp}/${p}`))];
      expect(lines.some((l) => l.startsWith(`${file}:`)), `${kind} ${file}: ${lines.join(' | ')}`).toBe(true);
      removeCopy(to);
    }
  });

  it('exits non-zero naming a damaged private manifest, and passes the pristine dist', () => {
    const run = (dist: string) => spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/register.mjs', import.meta.url)), 'verify', '--dist', dist], { encoding: 'utf8' });
    const good = run(world.dist);
    expect(good.status, good.stderr).toBe(0);
    const to = join(scratch, 'verify-cli');
    damagedCopy(world.dist, files, to, `${STAMP}/private/manifest.json`, 'flip', { linkFolders: false });
    const bad = run(to);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(new RegExp(`\\[verify\\] ${STAMP}/private/manifest\\.json: sha256 [0-9a-f]{64} does not match index\\.json`));
    removeCopy(to);
  });
});

describe('index.json naming a stamp that cannot be opened', () => {
  it('logs it once with the reason while that namespace answers 503 and the other is served', async () => {
    const cases: [string, (to: string) => Damage][] = [
      ['deleted', (to) => damagedCopy(world.dist, files, to, `${STAMPS[2]}/public/release.json`, 'delete')],
      ['damaged', (to) => damagedCopy(world.dist, files, to, `${STAMPS[2]}/public/manifest.json`, 'flip')],
    ];
    for (const [what, make] of cases) {
      const to = join(scratch, `stamp-${what}`);
      make(to);
      const log: LogRecord[] = [];
      let t = FUZZ_START;
      // The index is re-read every second: ten re-reads of the same index, one line.
      const built = buildApp({ dist: to, source: createFsSource({ root: to }), store: createMemoryStore(), keyStore, clock: { now: () => t }, problems: (r) => log.push(r) });
      try {
        for (let i = 0; i < 10; i++, t += 1500) {
          const ask = (ns: string) => built.app.fetch(new Request(`http://127.0.0.1/api/${ns}/meta`, { headers: { authorization: `Bearer ${world.keys.partner}` } }));
          const [v1, next] = [await ask('v1'), await ask('next')];
          expect([v1.status, next.status], what).toEqual([200, 503]);
          const body = await next.text();
          validateResponse({ method: 'GET', path: '/api/next/meta', status: 503, headers: next.headers, body });
          expect(JSON.parse(body).error).toBe('artefact_corrupt');
        }
        const once = log.filter((l) => l.event === 'release_unavailable');
        expect(once.length, what).toBe(1);
        expect(once[0].line).toContain(`names ${STAMPS[2]}, which cannot be opened: ${join(to, STAMPS[2], 'public', what === 'deleted' ? 'release.json: not found' : 'manifest.json: sha256')}`);
      } finally {
        await built.close();
        removeCopy(to);
      }
    }
  });
});

describe('a damaged mirror never answers other bytes', () => {
  let mirror: ServedDir;
  beforeAll(async () => {
    mkdirSync(join(scratch, 'mirror'), { recursive: true });
    mirror = await serveDir(join(scratch, 'mirror'));
  });
  afterAll(async () => {
    await mirror?.close();
  });

  it('one file of each public kind flipped, and a few deleted, over the HTTP source: identical answers or a 503 at no charge', async () => {
    const pub = files.filter((f) => f.startsWith(`${STAMP}/public/`));
    const pick = (prefix: string) => pub.find((f) => f.startsWith(`${STAMP}/public/${prefix}`) && statSync(join(world.dist, f)).size > 0)!;
    const kinds = ['shards/pack-', 'entities/index-dir-', 'entities/index-', 'resolve/keys-dir-', 'resolve/keys-', 'search/tokens-dir-', 'search/tokens-', 'search/docs-dir-', 'search/docs-', 'changes/all-', 'changes/type-label', 'documents/meta-v1', 'release.json', 'manifest.json'];
    const cases: [string, DamageKind][] = [...kinds.map((k) => [pick(k), 'flip'] as [string, DamageKind]), ['index.json', 'flip'], [pick('shards/pack-'), 'delete'], [pick('entities/index-dir-'), 'delete'], [pick('release.json'), 'truncate'], ['index.json', 'delete']];
    const upload = (f: string) => f === 'index.json' || f.includes('/public/');
    let n = 0;
    for (const [file, kind] of cases) {
      const name = `m${n++}`;
      const to = join(scratch, 'mirror', name);
      const d = damagedCopy(world.dist, files, to, file, kind, { only: upload, linkFolders: false });
      const log: LogRecord[] = [];
      const label = `mirror ${kind} ${file}`;
      const source = createHttpSource({ baseUrl: `${mirror.baseUrl}${name}/` });
      const { refused } = judge(d, await answers(`${mirror.baseUrl}${name}/`, source, log, world.dist), log, label);
      if (pristineReads.touched(d) || (kind === 'delete' && pristineReads.whole.has(file))) expect(refused, `${label}: read, yet unnoticed`).toBeGreaterThan(0);
      expect(mirror.log.some((r) => r.url.includes('/private/')), label).toBe(false);
      removeCopy(to);
    }
  });
});

describe('over real HTTP', () => {
  it('a flipped shard, a zeroed directory, a deleted notice batch and a truncated index.json: the same bytes or a documented 503', async () => {
    const arsenal = Buffer.from(`{"reep_id":"${ID.arsenal}"`);
    const cases: [string, DamageKind][] = [
      [files.find((f) => f.startsWith(`${STAMP}/public/shards/pack-`) && readFileSync(join(world.dist, f)).includes(arsenal))!, 'flip'],
      [files.find((f) => f.startsWith(`${STAMP}/public/entities/index-dir-`))!, 'zero'],
      [`${STAMP}/private/notices/opta.json`, 'delete'],
      ['index.json', 'truncate'],
    ];
    const paths: [string, string][] = [
      [`/entities/${ID.arsenal}?include=bridges`, 'partner'], [`/entities/${ID.palmer}`, 'partner'], ['/resolve/transfermarkt/11?namespace=verein', 'partner'],
      ['/search?q=chelsea', 'partner'], ['/changes?limit=5', 'partner'], ['/notices', 'opta'], ['/meta', 'partner'],
    ];
    for (const [file, kind] of cases) {
      const to = join(scratch, `http-${kind}`);
      damagedCopy(world.dist, files, to, file, kind);
      const logs: LogRecord[] = [];
      // Each pair starts with no state, so both deliver the notices as new.
      const good: Runtime = await startRuntime({ dist: world.dist, keys: world.keysFile, state: join(scratch, `state-good-${kind}`), port: 0, problems: () => {} });
      const bad = await startRuntime({ dist: to, keys: world.keysFile, state: join(scratch, `state-${kind}`), port: 0, problems: (r) => logs.push(r) });
      try {
        let refused = 0;
        for (const [path, key] of paths) {
          const keyOf = world.keys[key as keyof FuzzWorld['keys']];
          const [want, got] = [await client(`${good.url}/api/v1`, keyOf)(path), await client(`${bad.url}/api/v1`, keyOf)(path)]; // both validated
          const before = (await client(`${bad.url}/api/v1`, keyOf)('/key')).json?.key?.credits_remaining;
          if (got.status === 503) {
            refused++;
            expect(UNAVAILABLE).toContain(got.json.error);
            // A 503 costs nothing: asking again leaves the credits where they were.
            await client(`${bad.url}/api/v1`, keyOf)(path);
            if (before !== undefined) expect((await client(`${bad.url}/api/v1`, keyOf)('/key')).json.key.credits_remaining, `${kind} ${file} ${path}`).toBe(before);
          } else expect(got.text, `${kind} ${file} ${path}`).toBe(want.text);
        }
        expect(refused, `${kind} ${file}`).toBeGreaterThan(0);
        for (const l of logs.filter((x) => x.event === 'artefact_corrupt')) expect(l.file).toContain(file.split('/').pop()!);
      } finally {
        await bad.close();
        await good.close();
        removeCopy(to);
      }
    }
  });
});
