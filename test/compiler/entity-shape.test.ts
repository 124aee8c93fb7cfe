// The compiler writes entity shards as JSON text of its own; the contract states the Entity once, as a schema. This
// compiles a generated release and its successor, serves them, asks for every entity (and every retired ID) with
// every include, and holds each body to the contract module's Entity schema, key order included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCLUDES } from '../../common/ids.ts';
import { compileAll } from '../../compiler/compile.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { generateRelease } from '../../generator/synthetic.ts';
import { Entity } from '../../runtime/contract/schemas.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { validateComponent } from '../helpers/openapi-validator.ts';

const BASE = '20261101T000000Z';
const NEXT = '20261108T000000Z';
let root: string;
let rt: InProcessRuntime;
let call: ReturnType<typeof client>;

async function column(table: string, name: string): Promise<string[]> {
  const out: string[] = [];
  let at = -1;
  await readCsv(join(root, 'releases', NEXT, 'csv', `${table}.csv.gz`), table, {
    header: (h) => {
      at = h.indexOf(name);
    },
    row: (f) => void out.push(f[at]),
  });
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-entity-shape-'));
  await generateRelease({ out: join(root, 'releases', BASE), entities: 1500, seed: 11 });
  // The successor brings merges and tombstones: redirected answers carry requested_id and redirected_to.
  await generateRelease({ out: join(root, 'releases', NEXT), prior: join(root, 'releases', BASE), seed: 11 });
  // No patches: zstd would be a child process, which this in-process tier starts none of.
  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false, patches: false });
  const keys = join(root, 'keys.json');
  const { key } = await addKey({ file: keys, name: 'shape', quota: 1_000_000, rate: 1_000_000 });
  rt = await openInProcess({ dist: join(root, 'dist'), keys, state: join(root, 'state') });
  call = client(`${rt.url}/api/next`, key);
});

afterAll(async () => {
  await rt?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('compiled entities against the contract', () => {
  it('every entity and every retired ID, with every include, is an Entity of the contract; every section occurs', async () => {
    // The contract's own list of what an entity body may hold, read from the schema rather than written again here.
    const sections = Object.keys(Entity.properties);
    const seen = new Map<string, number>(sections.map((s) => [s, 0]));
    const ids = [...(await column('entities', 'reep_id')), ...(await column('redirects', 'from_id'))];
    expect(ids.length).toBeGreaterThan(1500);
    let answered = 0;
    for (const id of ids) {
      const r = await call(`/entities/${id}?include=${INCLUDES.join(',')}`);
      if (r.status === 410) continue; // a tombstone answers the GoneError body, which the client checked already
      expect(r.status).toBe(200);
      validateComponent('Entity', r.json);
      for (const k of Object.keys(r.json)) seen.set(k, (seen.get(k) ?? 0) + 1);
      answered++;
    }
    expect(answered).toBeGreaterThan(1400);
    // Nothing outside the schema (validateComponent refuses it too), and no section of the schema left unexercised.
    expect([...seen.keys()].sort()).toEqual([...sections].sort());
    expect([...seen].filter(([, n]) => n === 0).map(([s]) => s)).toEqual([]);
  });
});
