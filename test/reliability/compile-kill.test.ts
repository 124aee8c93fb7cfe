// A compile killed at random points never leaves a dist the runtime serves partially: dist/index.json keeps
// pointing at the last complete stamp, `register verify` passes on what is there, and the next compile finishes
// the job. A flipped byte in a shard pack is named by `register verify` and answered 503, never with wrong bytes.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll, listStamps, writeIndex } from '../../compiler/compile.ts';
import { verifyStamp } from '../../compiler/dist-manifest.ts';
import { generateRelease } from '../../generator/synthetic.ts';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import { buildApp } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { quotaPeriod } from '../../runtime/state/quota-period.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { ID, STAMPS } from '../fixtures/hand-world.ts';
import { prng } from './support/crash-loop.ts';
import { keyId, makeFuzzWorld, type FuzzWorld } from './support/reliability-world.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/register.mjs');
// Ten kills reach every stage of the measured work (about a third of them in its last stretch, where the stamp is
// published); the kill points are seeded, so a failure replays.
const KILLS = 10;
// Every stage runs at any size, and kills are placed across the compile's measured work, so the size sets only how
// long each round takes: a few hundred entities keep a round short and still take the compile through worker
// threads, spills and every writer.
const ENTITIES = Number(process.env.COMPILE_KILL_ENTITIES ?? 200);
const A = '20260101T000000Z';
const B = '20260108T000000Z';
const SEED = Number(process.env.COMPILE_KILL_SEED ?? 4242);

const temps: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const register = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `register compile` of everything under releases/ into `dist`, as a child. `working` resolves with the moment its
 * temp folder (`.tmp-<stamp>-<pid>`) appears, i.e. when the compile starts writing; null if it exits first.
 */
function startCompile(dist: string, releases = join(dist, '..', 'releases')) {
  const proc = spawn(process.execPath, [BIN, 'compile', '--releases', releases, '--out', dist], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  const working = new Promise<number | null>((resolve) => {
    const tmp = join(dist, `.tmp-${B}-${proc.pid}`);
    const poll = setInterval(() => {
      if (existsSync(tmp)) {
        clearInterval(poll);
        resolve(performance.now());
      }
    }, 5);
    void exited.then(() => {
      clearInterval(poll);
      resolve(null);
    });
  });
  return { proc, exited, working, stderr: () => err };
}

interface Served {
  status: number;
  stamp: string | null;
  body: string;
}

/** Requests, in order, to one runtime freshly opened on `dist`, each answer validated against the document. */
async function serveFresh(dist: string, keysFile: string, key: string, paths: string[]): Promise<Served[]> {
  const keyStore = openKeyStore({ file: keysFile });
  const source = createFsSource({ root: dist });
  try {
    const { app } = buildApp({ dist, source, store: createMemoryStore(), keyStore });
    const out: Served[] = [];
    for (const path of paths) {
      const res = await app.fetch(new Request(`http://127.0.0.1/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
      const body = await res.text();
      if (res.status !== 503) validateResponse({ method: 'GET', path: `/api/v1${path}`, status: res.status, headers: res.headers, body });
      out.push({ status: res.status, stamp: res.headers.get('x-register-release-stamp'), body });
    }
    return out;
  } finally {
    keyStore.close();
    await source.close();
  }
}

/** One request to a runtime freshly opened on `dist`, validated against the document. */
const serveOnce = async (dist: string, keysFile: string, key: string, path: string): Promise<Served> => (await serveFresh(dist, keysFile, key, [path]))[0];

describe('a compile killed at random points', () => {
  let root: string;
  let releases: string;
  let keysFile: string;
  let key: string;
  let idInA: string;
  let compileMs: number;

  beforeAll(async () => {
    root = tempDir('ir-compile-kill-');
    releases = join(root, 'releases');
    // In process: `register generate` would write the same bytes (same defaults), and is not what is tested here.
    await generateRelease({ out: join(releases, A), entities: ENTITIES });
    await generateRelease({ out: join(releases, B), prior: join(releases, A) });
    const firstRow = gunzipSync(readFileSync(join(releases, A, 'csv/entities.csv.gz'))).toString('utf8').split('\n')[1];
    idInA = firstRow.split(',')[0];
    const world = await makeFuzzWorld(); // only for its keys file
    temps.push(world.root);
    keysFile = world.keysFile;
    key = world.keys.partner;
  });

  /**
   * Everything a kill may leave must still be a dist the runtime serves whole. A compile of B writes nothing of A,
   * so A is re-hashed only when `deep`: damage to it would stay, and the next deep check (every fifth kill and the
   * last) would find it. `cliVerify` also runs `register verify`.
   */
  async function checkDist(dist: string, label: string, deep: boolean, cliVerify = deep): Promise<string> {
    const index = JSON.parse(readFileSync(join(dist, 'index.json'), 'utf8')); // atomic rename: never half a file
    expect([A, B], label).toContain(index.v1);
    for (const stamp of await listStamps(dist)) if (deep || stamp !== A) expect(await verifyStamp(join(dist, stamp)), `${label}: ${stamp}`).toEqual([]);
    for (const r of index.releases as { stamp: string }[]) expect(existsSync(join(dist, r.stamp, 'manifest.json')), `${label}: ${r.stamp} listed but missing`).toBe(true);
    if (cliVerify) {
      const v = register(['verify', '--dist', dist]);
      expect(v.status, `${label}: register verify\n${v.stderr}`).toBe(0);
    }
    const [home, entity] = await serveFresh(dist, keysFile, key, ['/', `/entities/${idInA}`]);
    expect(home.status, label).toBe(200);
    expect(home.stamp, label).toBe(index.v1);
    expect(entity.status, label).toBe(200);
    return index.v1;
  }

  it(`${KILLS} SIGKILLs during \`register compile\`: index.json keeps the last complete stamp, verify passes, the next compile finishes`, async () => {
    const dist = join(root, 'dist');
    const t0 = performance.now();
    await compileAll({ releases, dist, stamp: A, progress: false });
    compileMs = performance.now() - t0;
    expect(await checkDist(dist, 'after compiling A', true)).toBe(A);

    // One undisturbed CLI compile of B to learn how long its work takes here (from its temp folder appearing to its
    // exit; Node and tsx start-up before that writes nothing), then B out again.
    const measured = startCompile(dist);
    const workStart = await measured.working;
    const done = await measured.exited;
    expect(done.code, measured.stderr()).toBe(0);
    const work = performance.now() - workStart!;
    expect(await checkDist(dist, 'after an undisturbed compile of B', true, false)).toBe(B);
    rmSync(join(dist, B), { recursive: true, force: true });
    await writeIndex(dist);

    const rnd = prng(SEED);
    // Kill anywhere in the compile's work, with extra weight on its last stretch, where the stamp folder is renamed
    // into place and index.json is rewritten.
    let kills = 0;
    let finished = 0;
    let checksMs = 0;
    const killedAt: number[] = [];
    let estimate = work;
    while (kills < KILLS) {
      const at = rnd() < 0.3 ? estimate * (0.85 + 0.2 * rnd()) : estimate * rnd();
      const child = startCompile(dist);
      const exited = child.exited;
      const started = await child.working;
      if (started !== null) await Promise.race([sleep(at), exited]);
      if (child.proc.exitCode === null && child.proc.signalCode === null) {
        child.proc.kill('SIGKILL');
        kills++;
        killedAt.push(Math.round(at));
      }
      const exit = await exited;
      if (exit.signal !== 'SIGKILL') {
        expect(exit.code, child.stderr()).toBe(0); // a compile that was not killed must have succeeded
        finished++;
        // The machine got faster than when measured (other work ended): aim the next kills within this duration.
        if (started !== null) estimate = Math.min(estimate, performance.now() - started);
      }
      const label = `kill ${kills}, ${Math.round(at)} ms into the work`;
      const c0 = performance.now();
      const serving = await checkDist(dist, label, kills % 5 === 0, kills % 10 === 0);
      checksMs += performance.now() - c0;
      if (serving === B) {
        // Finished before the kill landed: take B out again so the next round has a compile to interrupt.
        rmSync(join(dist, B), { recursive: true, force: true });
        await writeIndex(dist);
      }
    }
    console.log(`[compile-kill] ${ENTITIES} entities: in-process compile of A ${Math.round(compileMs)} ms, CLI compile work of B ${Math.round(work)} ms; killed at ${killedAt.join(', ')} ms; ${finished} compile(s) finished before their kill; checks after the kills took ${Math.round(checksMs)} ms`);

    // The following full compile succeeds, sweeps the leftovers and publishes B.
    const last = register(['compile', '--releases', releases, '--out', dist]);
    expect(last.status, last.stderr).toBe(0);
    expect(readdirSync(dist).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(await checkDist(dist, 'after the final compile', true)).toBe(B);
  }, 480_000); // ~30 s on a quiet machine; the bound is for one busy with other work
});

describe('a compile killed at an exact step', () => {
  const PRELOAD = join(ROOT, 'test/reliability/support/kill-before-rename.mjs');
  let root: string;
  let keysFile: string;
  let key: string;

  beforeAll(async () => {
    // Two small releases are enough: these kills are placed, not timed.
    const world = await makeFuzzWorld();
    temps.push(world.root);
    keysFile = world.keysFile;
    key = world.keys.partner;
    root = world.root;
  });

  /** `register compile` that SIGKILLs itself right before renaming onto a path ending with `renameTo`. */
  function compileKilledBefore(renameTo: string, args: string[]) {
    return spawnSync(process.execPath, ['--import', PRELOAD, BIN, 'compile', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, KILL_BEFORE_RENAME_TO: renameTo } });
  }

  function freshDist(stamps: string[]): string {
    const dist = tempDir('ir-exact-');
    for (const s of stamps) cpSync(join(root, 'dist', s), join(dist, s), { recursive: true });
    return dist;
  }

  it('killed just before the new stamp folder is renamed into place: the previous stamp is served, the next compile publishes', async () => {
    const dist = freshDist([STAMPS[0]]);
    await writeIndex(dist);
    const killed = compileKilledBefore(`/${STAMPS[1]}`, ['--releases', join(root, 'releases'), '--out', dist]);
    expect(killed.signal).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(join(dist, 'index.json'), 'utf8')).v1).toBe(STAMPS[0]);
    expect(await listStamps(dist)).toEqual([STAMPS[0]]);
    expect((await serveOnce(dist, keysFile, key, '/')).stamp).toBe(STAMPS[0]);
    const again = register(['compile', '--releases', join(root, 'releases'), '--out', dist]);
    expect(again.status, again.stderr).toBe(0);
    expect((await serveOnce(dist, keysFile, key, '/')).stamp).toBe(STAMPS[1]);
  });

  it('killed just before index.json is replaced: the old pointer stays whole, and the next compile moves it', async () => {
    const dist = freshDist([STAMPS[0]]);
    await writeIndex(dist);
    const killed = compileKilledBefore('/index.json', ['--releases', join(root, 'releases'), '--out', dist]);
    expect(killed.signal).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(join(dist, 'index.json'), 'utf8')).v1).toBe(STAMPS[0]);
    expect((await serveOnce(dist, keysFile, key, '/')).stamp).toBe(STAMPS[0]);
    for (const stamp of await listStamps(dist)) expect(await verifyStamp(join(dist, stamp))).toEqual([]);
    const again = register(['compile', '--releases', join(root, 'releases'), '--out', dist]);
    expect(again.status, again.stderr).toBe(0);
    expect((await serveOnce(dist, keysFile, key, '/')).stamp).toBe(STAMPS[1]);
  });

  // compiler/compile-release.ts replaces an existing stamp with rm(final) then rename(tmp, final): between the two,
  // index.json points at a folder that is gone (or, during the rm, half gone). Reported; pinned until fixed.
  it('`compile --stamp S` of an unchanged release leaves the served S untouched (same bytes, no swap)', async () => {
    const dist = freshDist([STAMPS[0], STAMPS[1]]);
    await writeIndex(dist);
    const before = readFileSync(join(dist, STAMPS[1], 'manifest.json'), 'utf8');
    const run = compileKilledBefore(`/${STAMPS[1]}`, ['--releases', join(root, 'releases'), '--out', dist, '--stamp', STAMPS[1]]);
    expect(run.signal).toBeNull(); // no rename of S was needed, so the trap never fired
    expect(run.status, run.stderr).toBe(0);
    expect(readFileSync(join(dist, STAMPS[1], 'manifest.json'), 'utf8')).toBe(before);
    expect((await serveOnce(dist, keysFile, key, '/')).status).toBe(200);
  });

  it('replacing a served S that differs, killed before the new S is renamed in: the next compile restores S', async () => {
    const dist = freshDist([STAMPS[0], STAMPS[1]]);
    await writeIndex(dist);
    // Make the published S differ from what the compiler now writes (as after a compiler upgrade).
    const m = JSON.parse(readFileSync(join(dist, STAMPS[1], 'manifest.json'), 'utf8'));
    writeFileSync(join(dist, STAMPS[1], 'manifest.json'), JSON.stringify({ ...m, digest: '0'.repeat(64) }));
    const killed = compileKilledBefore(`/${STAMPS[1]}`, ['--releases', join(root, 'releases'), '--out', dist, '--stamp', STAMPS[1]]);
    expect(killed.signal).toBe('SIGKILL');
    // The old S waits aside; any next compile moves it back before doing anything else.
    expect(readdirSync(dist)).toContain(`.tmp-old-${STAMPS[1]}`);
    const again = register(['compile', '--releases', join(root, 'releases'), '--out', dist]);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dist, 'index.json'), 'utf8')).v1).toBe(STAMPS[1]);
    expect((await serveOnce(dist, keysFile, key, '/')).status).toBe(200);
  });
});

describe('a flipped byte in a compiled dist', () => {
  let world: FuzzWorld;
  let dist: string;
  let pack: string;
  beforeAll(async () => {
    world = await makeFuzzWorld();
    temps.push(world.root);
    dist = tempDir('ir-flip-');
    cpSync(world.dist, dist, { recursive: true });
    const shards = join(dist, STAMPS[1], 'public', 'shards');
    // Entities are spread over several packs (whose names, content hashes, order them at random): take Arsenal's.
    const shard = `{"reep_id":"${ID.arsenal}"`;
    pack = readdirSync(shards).filter((n) => n.startsWith('pack-')).map((n) => join(shards, n)).find((p) => readFileSync(p).includes(shard))!;
    const bytes = readFileSync(pack);
    const at = bytes.indexOf(shard) + 40; // inside Arsenal's shard only
    bytes[at] ^= 0x20;
    writeFileSync(pack, bytes);
  });

  const get = (d: string, path: string) => serveOnce(d, world.keysFile, world.keys.partner, path);

  it('`register verify` exits non-zero and names the file', () => {
    const v = register(['verify', '--dist', dist]);
    expect(v.status).not.toBe(0);
    expect(v.stderr).toContain(`${STAMPS[1]}/public/shards/${pack.split('/').pop()}`);
    expect(v.stderr).toMatch(/sha256 .* does not match the manifest/);
  });

  it('the runtime answers 503 artefact_corrupt for every way to reach that entity, and the same bytes as before for the others', async () => {
    for (const path of [`/entities/${ID.arsenal}`, `/entities/${ID.arsenal}/bridges`, `/entities/${ID.lodz}`, `/resolve/transfermarkt/11?namespace=verein`]) {
      const r = await get(dist, path);
      expect(r.status, path).toBe(503);
      expect(JSON.parse(r.body), path).toMatchObject({ error: 'artefact_corrupt', detail: expect.any(String) });
    }
    for (const path of [`/entities/${ID.chelsea}?include=aliases,attributes,bridges,relationships,overlay`, `/entities/${ID.palmer}`, `/entities/${ID.tomb}`, '/search?q=chelsea']) {
      const [good, flipped] = [await get(world.dist, path), await get(dist, path)];
      expect(flipped, path).toEqual(good);
    }
  });

  it('a batch that includes the damaged entity never carries its bytes: that item is 503 in place and costs nothing', async () => {
    const keyStore = openKeyStore({ file: world.keysFile });
    const source = createFsSource({ root: dist });
    const store = createMemoryStore();
    try {
      const { app } = buildApp({ dist, source, store, keyStore, log: () => {} });
      const path = '/api/v1/batch';
      const res = await app.fetch(
        new Request(`http://127.0.0.1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.keys.partner}`, 'content-type': 'application/json' },
          body: JSON.stringify({ requests: [{ type: 'entity', id: ID.chelsea }, { type: 'entity', id: ID.arsenal }] }),
        }),
      );
      const text = await res.text();
      validateResponse({ method: 'POST', path, status: res.status, headers: res.headers, body: text });
      expect(res.status).toBe(200);
      expect(text).not.toContain('Arsenal');
      const { results } = JSON.parse(text);
      expect(results.map((r: { status: number }) => r.status)).toEqual([200, 503]);
      expect(results[1].body).toMatchObject({ error: 'artefact_corrupt', detail: ID.arsenal });
      // One item answered, one lookup charged (a fresh store: the key's whole quota before).
      const quota = world.quotas.get(keyId(world.keys.partner))!;
      expect(await store.remaining(keyId(world.keys.partner), quotaPeriod(Date.now()), quota)).toBe(quota - 1);
      expect(res.headers.get('x-register-credits-remaining')).toBe(String(quota - 1));
    } finally {
      keyStore.close();
      await source.close();
    }
  });

  it('the artefact_corrupt 503 is a documented answer', async () => {
    const keyStore = openKeyStore({ file: world.keysFile });
    const source = createFsSource({ root: dist });
    try {
      const { app } = buildApp({ dist, source, store: createMemoryStore(), keyStore });
      const res = await app.fetch(new Request(`http://127.0.0.1/api/v1/entities/${ID.arsenal}`, { headers: { authorization: `Bearer ${world.keys.partner}` } }));
      validateResponse({ method: 'GET', path: `/api/v1/entities/${ID.arsenal}`, status: res.status, headers: res.headers, body: await res.text() });
    } finally {
      keyStore.close();
      await source.close();
    }
  });

  it('a flipped byte in the resolve index or a precomputed document is refused like a shard, never served', async () => {
    const public1 = join(world.dist, STAMPS[1], 'public');
    const resolvePack = join('resolve', readdirSync(join(public1, 'resolve')).find((n) => n.endsWith('.pack'))!);
    const probes: [string, string][] = [
      [resolvePack, '/resolve/transfermarkt/500?namespace=verein'],
      ['documents/providers.json', '/providers'],
      ['documents/meta-v1.json', '/meta'],
    ];
    for (const [file, path] of probes) {
      const d = tempDir('ir-flip-');
      cpSync(world.dist, d, { recursive: true });
      const target = join(d, STAMPS[1], 'public', file);
      const bytes = readFileSync(target);
      bytes[bytes.length >> 2] ^= 0x01;
      writeFileSync(target, bytes);
      const [good, flipped] = [await get(world.dist, path), await get(d, path)];
      expect(flipped.status === 503 || flipped.body === good.body, `${file}: ${path} answered ${flipped.status} ${flipped.body.slice(0, 120)}`).toBe(true);
    }
  });
});
