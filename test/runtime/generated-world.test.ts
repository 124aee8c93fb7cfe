// Sweeps the committed generated releases (releases/): every sampled entity's bridges resolve back to it, every
// retired ID answers 200-with-survivor or 410, search finds labels, and the successor's changelog has every type.
import { mkdtempSync } from 'node:fs';
import { CHANGE_EVENT_TYPES } from '../../common/dist-layout.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStamp } from '../../compiler/dist-manifest.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { compiledSamples, copyCompiled } from '../fixtures/compiled-fixtures.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';

const STAMP = '20261008T120000Z';
let root: string;
let rt: InProcessRuntime;
let call: ReturnType<typeof client>;

async function rows(table: string): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  let header: string[] = [];
  await readCsv(join(root, 'releases', STAMP, 'csv', `${table}.csv.gz`), table, {
    header: (h) => {
      header = h;
    },
    row: (f) => void out.push(Object.fromEntries(header.map((h, i) => [h, f[i]]))),
  });
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-gen-'));
  copyCompiled(await compiledSamples(), root);
  const keys = join(root, 'keys.json');
  const { key } = await addKey({ file: keys, name: 'sweep', quota: 1_000_000, rate: 1_000_000 });
  rt = await openInProcess({ dist: join(root, 'dist'), keys, state: join(root, 'state') });
  call = client(rt.url + '/api/v1', key);
});
afterAll(async () => {
  await rt?.close();
});

describe('generated releases', () => {
  it('compile to trees that verify', async () => {
    for (const s of ['20261001T120000Z', STAMP]) expect(await verifyStamp(join(root, 'dist', s))).toEqual([]);
  });

  it('every bridge of a sample of entities resolves back to its entity', async () => {
    const entities = await rows('entities');
    const sample = entities.filter((_, i) => i % 25 === 0);
    let checked = 0;
    for (const e of sample) {
      const r = await call(`/entities/${e.reep_id}?include=bridges`);
      expect(r.status).toBe(200);
      expect(r.json.name_en).toBe(e.label);
      for (const b of r.json.bridges) {
        const q = b.namespace ? `?namespace=${encodeURIComponent(b.namespace)}` : '';
        const res = await call(`/resolve/${encodeURIComponent(b.provider)}/${encodeURIComponent(b.external_id)}${q}`);
        expect([200, 409]).toContain(res.status);
        expect(res.json.results.map((x: { reep_id: string }) => x.reep_id)).toContain(e.reep_id);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('every retired ID answers: merged → 200 with the final live survivor, tombstoned → 410', async () => {
    const redirects = await rows('redirects');
    expect(redirects.length).toBeGreaterThan(0);
    for (const r of redirects) {
      const res = await call(`/entities/${r.from_id}`);
      if (r.reason === 'merged') {
        expect(res.status).toBe(200);
        expect(res.json.requested_id).toBe(r.from_id);
        expect(res.json.reep_id).toBe(res.json.redirected_to);
      } else {
        expect(res.status).toBe(410);
        expect(res.json.detail).toBe(r.from_id);
      }
    }
  });

  it('search finds entities by their labels', async () => {
    const entities = (await rows('entities')).filter((e) => e.entity_type === 'player').slice(0, 30);
    let found = 0;
    for (const e of entities) {
      const r = await call(`/search?q=${encodeURIComponent(e.label)}&limit=20`);
      if (r.status === 200 && r.json.results.some((x: { reep_id: string }) => x.reep_id === e.reep_id)) found++;
    }
    // Candidate lists are bounded (500 per token), so a very common name may rank out; most must be found.
    expect(found).toBeGreaterThanOrEqual(25);
  });

  it('the successor changelog has every event type, and pages add up to the counts', async () => {
    const sum = await call('/changes/summary');
    for (const t of CHANGE_EVENT_TYPES) {
      expect(sum.json.counts[t], t).toBeGreaterThan(0);
    }
    const total = Object.values(sum.json.counts as Record<string, number>).reduce((a, b) => a + b, 0);
    let seen = 0;
    let cursor: string | null = null;
    do {
      const page: { json: { events: unknown[]; next_cursor: string | null; matched: number } } = await call(`/changes?limit=37${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.json.matched).toBe(total);
      seen += page.json.events.length;
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toBe(total);
  });
});
