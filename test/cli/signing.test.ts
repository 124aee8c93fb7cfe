// Signed releases as an operator uses them: `signing-key new`, `compile --sign` and `sign` (same bytes twice),
// `verify --trust` naming each fault, and `serve --trust` (real processes, HTTP validated against the OpenAPI
// document) serving what is signed and refusing, with a log line, what is not: untrusted, expired, forged, rolled back.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandLine } from '../../cli/command-line.ts';
import { registerCommand } from '../../cli/register-command.ts';
import { writeIndex } from '../../compiler/compile.ts';
import { readSigningKey, readTrust, signStampManifest, verifyDistSignatures } from '../../common/signing-files.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { runToExit } from '../helpers/run-command.ts';
import { serveDir } from '../helpers/serve-dir.ts';
import { makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/register.mjs');
const LISTENING = /\[serve\] listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/;
const [OLDEST, V1, NEXT] = STAMPS; // v1 serves the publishable 20261008, next the staging-only 20261015
const spawned: ChildProcess[] = [];
/** Reproducible signing: every signature of the shared dist is dated NEXT's instant (valid 180 days, to 2027-04-13). */
const SIGNED_AT = '2026-10-15T00:00:00Z';

/** `register ARGS` in this process (the command line is the subject, not the process): its exit and its output. */
async function register(...args: string[]): Promise<{ ok: boolean; out: string }> {
  let out = '';
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (out += t) };
  const e = await runCommandLine(registerCommand, args, ['register'], io).then(() => null, (x: unknown) => x as Error);
  if (e) out += `${e.message}\n`;
  return { ok: e === null, out };
}

/** `register serve --trust …` as a process; resolves with its base URL and a view of its stderr. */
async function serve(dist: string, keys: string, trust: string): Promise<{ url: string; err(): string }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--dist', dist, '--keys', keys, '--state', 'memory:', '--port', '0', '--access-log', 'off', '--trust', trust], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  spawned.push(proc);
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = LISTENING.exec(err);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening:\n${err}`)));
  });
  return { url, err: () => err };
}

/** Every file under `dir` with its bytes, for comparing two trees. */
function tree(dir: string, base = dir, out = new Map<string, string>()): Map<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) tree(p, base, out);
    else out.set(p.slice(base.length), createHash('sha256').update(readFileSync(p)).digest('hex'));
  }
  return out;
}

let world: World;
let apiKeys: string;
let apiKey: string;
let keyA: string;
let keyB: string;
let idA: string;
let idB: string;
const copies: string[] = [];

/** A copy of the signed dist to damage. */
function copyDist(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ir-signed-'));
  copies.push(dir);
  cpSync(world.dist, dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  world = await makeHandWorld();
  apiKeys = join(world.root, 'keys.json');
  apiKey = (await addKey({ file: apiKeys, name: 'signing', quota: 1000, rate: 1000 })).key;
  keyA = join(world.root, 'a.key');
  keyB = join(world.root, 'b.key');
  // As a process: the key ID printed on stdout, the files' modes are the subject.
  const made = await Promise.all([keyA, keyB].map((k) => runToExit(process.execPath, [BIN, 'signing-key', 'new', '--out', k])));
  for (const m of made) expect(m.status, m.stderr).toBe(0);
  [idA, idB] = made.map((m) => m.stdout.trim());
  expect(idA).toMatch(/^[0-9a-f]{16}$/);
  expect((await register('sign', '--dist', world.dist, '--key', keyA, '--signed-at', SIGNED_AT)).ok).toBe(true);
});

afterAll(() => {
  for (const p of spawned) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const d of copies) rmSync(d, { recursive: true, force: true });
  rmSync(world.root, { recursive: true, force: true });
});

describe('signing a dist', () => {
  it('compile --sign writes the same bytes as compile then sign, and signing again changes nothing', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'ir-signed-compile-'));
    copies.push(fresh);
    const r = await register('compile', '--releases', world.releases, '--out', fresh, '--sign', keyA, '--signed-at', SIGNED_AT);
    expect(r.ok, r.out).toBe(true);
    const signed = tree(world.dist);
    // The command line also writes its compile reports (HTML for people); compare the dist proper.
    const strip = (m: Map<string, string>) => new Map([...m].filter(([f]) => !f.startsWith('/reports/')));
    expect(strip(tree(fresh))).toEqual(strip(signed));
    expect(signed.has(`/${NEXT}/public/manifest.json.sig`)).toBe(true);
    expect(signed.has('/index.json.sig')).toBe(true);
    expect((await register('sign', '--dist', world.dist, '--key', keyA, '--signed-at', SIGNED_AT)).ok).toBe(true);
    expect(tree(world.dist)).toEqual(signed);

    // Compiled again without --sign, a stamp gives the same bytes, so its signatures and the index's still hold.
    const again = await register('compile', '--releases', world.releases, '--out', fresh, '--stamp', NEXT);
    expect(again.out).not.toMatch(/warning/);
    const check = await verifyDistSignatures(fresh, STAMPS, await readTrust([`${keyA}.pub`]), new Date());
    expect([check.index, [...check.stamps.values()].flat()]).toEqual([[], []]);
  });

  it('signs at the signing moment by default: a release stamped longer ago than --valid-days is accepted by verify --trust', async () => {
    // Stamped 2026-10-01..15; valid 30 days from the stamp, the signatures would have expired by 2026-11-14.
    const dist = copyDist();
    const r = await register('sign', '--dist', dist, '--key', keyA, '--valid-days', '30');
    expect(r.ok, r.out).toBe(true);
    const signedAt = JSON.parse(readFileSync(join(dist, 'index.json.sig'), 'utf8')).signed_at as string;
    expect(Date.now() - Date.parse(signedAt)).toBeLessThan(3_600_000);
    const v = await register('verify', '--dist', dist, '--trust', `${keyA}.pub`);
    expect(v.ok, v.out).toBe(true);
    expect(v.out).toContain(`${NEXT}: ok, signed by ${idA}`);
  });

  it('compile --sign and sign refuse, naming the date, a signature that would be born expired or expire within a day', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'ir-signed-refused-'));
    copies.push(fresh);
    const r = await register('compile', '--releases', world.releases, '--out', fresh, '--sign', keyA, '--signed-at', '2020-01-01T00:00:00Z');
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(/\[compile\] refused: a signature made at 2020-01-01T00:00:00Z, valid 180 days, expires at 2020-06-29T00:00:00Z: already expired at /);
    expect(readdirSync(fresh)).toEqual([]); // refused before compiling
    const soon = new Date(Date.now() - 29.5 * 86_400_000).toISOString();
    const s = await register('sign', '--dist', copyDist(), '--key', keyA, '--signed-at', soon, '--valid-days', '30');
    expect(s.ok).toBe(false);
    expect(s.out).toMatch(/\[sign\] refused: .* expires at \S+: expiring within a day/);
  });

  it('SOURCE_DATE_EPOCH signs reproducibly: two runs, the same signature bytes; a malformed value is refused', async () => {
    const env = { ...process.env, SOURCE_DATE_EPOCH: '1793491200' }; // 2026-11-01T00:00:00Z
    const [one, two] = [copyDist(), copyDist()];
    for (const d of [one, two]) {
      const r = await runToExit(process.execPath, [BIN, 'sign', '--dist', d, '--key', keyA], { env });
      expect(r.status, r.stderr).toBe(0);
    }
    const sigs = (d: string) => new Map([...tree(d)].filter(([f]) => f.endsWith('.sig')));
    expect(sigs(one).size).toBe(STAMPS.length + 1);
    expect(sigs(two)).toEqual(sigs(one));
    expect(JSON.parse(readFileSync(join(one, 'index.json.sig'), 'utf8')).signed_at).toBe('2026-11-01T00:00:00Z');
    const bad = await runToExit(process.execPath, [BIN, 'sign', '--dist', one, '--key', keyA], { env: { ...process.env, SOURCE_DATE_EPOCH: '2026-11-01' } });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/SOURCE_DATE_EPOCH="2026-11-01" is not a whole number of seconds/);
  });

  it('verify --trust passes a signed dist and names the key', async () => {
    const r = await register('verify', '--dist', world.dist, '--trust', `${keyA}.pub`);
    expect(r.ok, r.out).toBe(true);
    expect(r.out).toContain(`${NEXT}: ok, signed by ${idA}`);
  });

  it('verify --trust names each fault', async () => {
    const verify = async (dist: string, ...more: string[]) => register('verify', '--dist', dist, '--trust', `${keyA}.pub`, ...more);

    // One byte changed in a public file.
    const byte = copyDist();
    const doc = join(byte, NEXT, 'public', 'release.json');
    const bytes = readFileSync(doc);
    bytes[10] ^= 1;
    writeFileSync(doc, bytes);
    expect((await verify(byte)).out).toMatch(new RegExp(`${NEXT}/public/release.json: sha256 \\w+ does not match the manifest`));

    // A manifest rewritten together with its files (and index.json with it): the signatures no longer match.
    const rewritten = copyDist();
    const pm = join(rewritten, NEXT, 'public', 'manifest.json');
    const manifest = JSON.parse(readFileSync(pm, 'utf8'));
    manifest.files['extra.json'] = { bytes: 2, sha256: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a' };
    writeFileSync(join(rewritten, NEXT, 'public', 'extra.json'), '{}');
    writeFileSync(pm, JSON.stringify(manifest));
    await writeIndex(rewritten);
    const r1 = await verify(rewritten);
    expect(r1.ok).toBe(false);
    expect(r1.out).toMatch(new RegExp(`${NEXT}/public/manifest.json.sig: other_bytes`));
    expect(r1.out).toMatch(/index\.json\.sig: other_bytes/);

    // The signature replaced: a field changed under the same signature, or another key's signature.
    const forged = copyDist();
    const sigFile = join(forged, NEXT, 'public', 'manifest.json.sig');
    const sig = JSON.parse(readFileSync(sigFile, 'utf8'));
    writeFileSync(sigFile, JSON.stringify({ ...sig, valid_until: '2099-01-01T00:00:00Z' }));
    // The signature layer of verify alone from here where the files' own hashes are not the subject (each full
    // verify re-hashes every file of three stamps).
    const now = new Date();
    const trustA = await readTrust([`${keyA}.pub`]);
    expect((await verifyDistSignatures(forged, STAMPS, trustA, now)).stamps.get(NEXT)).toEqual([expect.stringMatching(/^public\/manifest\.json\.sig: bad_signature/)]);

    const untrusted = copyDist();
    expect((await register('sign', '--dist', untrusted, '--stamp', NEXT, '--key', keyB)).ok).toBe(true);
    const byB = await verifyDistSignatures(untrusted, STAMPS, trustA, now);
    expect(byB.stamps.get(NEXT)).toEqual([expect.stringMatching(new RegExp(`untrusted_key: signed by key ${idB}`))]);
    expect(byB.index).toEqual([expect.stringMatching(/index\.json\.sig: untrusted_key/)]);
    // Rotation: trusting both keys (a .pub file and a key given inline), the same dist verifies.
    const both = await verifyDistSignatures(untrusted, STAMPS, await readTrust([`${keyA}.pub`, readFileSync(`${keyB}.pub`, 'utf8').trim()]), now);
    expect([both.index, [...both.stamps.values()].flat(), both.signedBy.get(NEXT)]).toEqual([[], [], idB]);

    // valid_until passed: checked as of a later time (the injectable clock of the command line).
    const late = await verify(world.dist, '--at', '2027-12-01T00:00:00Z');
    expect(late.ok).toBe(false);
    expect(late.out).toMatch(/index\.json\.sig: expired: expired at 2027-04-13T00:00:00Z/);

    // An older signed index.json put back.
    const rolled = copyDist();
    const older = olderSignedIndex();
    writeFileSync(join(rolled, 'index.json'), older.index);
    writeFileSync(join(rolled, 'index.json.sig'), older.sig);
    const r2 = await verify(rolled);
    expect(r2.ok).toBe(false);
    expect(r2.out).toMatch(new RegExp(`index\\.json: rollback: names ${V1} for next, older than ${NEXT} already accepted`));
  });
});

/** index.json and its signature as they were before NEXT was compiled: signed, genuine, and older. */
let older: { index: Buffer; sig: Buffer } | undefined;
function olderSignedIndex(): { index: Buffer; sig: Buffer } {
  if (!older) throw new Error('made in beforeAll of the serve tests');
  return older;
}

beforeAll(async () => {
  const past = mkdtempSync(join(tmpdir(), 'ir-signed-past-'));
  copies.push(past);
  cpSync(world.dist, past, { recursive: true });
  rmSync(join(past, NEXT), { recursive: true });
  await writeIndex(past);
  expect((await register('sign', '--dist', past, '--stamp', V1, '--key', keyA, '--signed-at', '2026-10-08T00:00:00Z')).ok).toBe(true);
  older = { index: readFileSync(join(past, 'index.json')), sig: readFileSync(join(past, 'index.json.sig')) };
});

describe('serve --trust', () => {
  it('serves what trusted keys signed, names the key in / and /meta, and refuses an older index put back', async () => {
    // Rotation: v1 signed by A, next by B, both trusted.
    const dist = copyDist();
    expect((await register('sign', '--dist', dist, '--stamp', NEXT, '--key', keyB)).ok).toBe(true);
    const s = await serve(dist, apiKeys, `${keyA}.pub,${keyB}.pub`);
    const call = client(s.url);
    const root = await call('/api/v1/');
    expect(root.status).toBe(200);
    expect(root.json.signing_key_id).toBe(idA);
    const next = await call('/api/next/');
    expect(next.status).toBe(200);
    expect(next.json.signing_key_id).toBe(idB);
    expect(next.headers.get('x-register-release-stamp')).toBe(NEXT);

    // Put the older signed index back: refused (logged), the newer stamps stay served.
    const o = olderSignedIndex();
    writeFileSync(join(dist, 'index.json.sig'), o.sig);
    writeFileSync(join(dist, 'index.json'), o.index);
    // The index is re-read when a request comes (at most once a second).
    await eventually('the rollback refused in the log', async () => (await call('/api/next/')).status === 200 && /rollback refused/.test(s.err()));
    const still = await call('/api/next/');
    expect(still.status).toBe(200);
    expect(still.headers.get('x-register-release-stamp')).toBe(NEXT);
  });

  it('answers 503 for a stamp signed by an untrusted key, expired, or forged, naming why in the log once; serves it once re-signed', async () => {
    const dist = copyDist();
    // v1: expired long ago; next: signed by B, which is not trusted; index.json (signed last) by A, valid.
    expect((await register('sign', '--dist', dist, '--stamp', NEXT, '--key', keyB)).ok).toBe(true);
    // A signature that expired in use (`sign` refuses to write one): made by the library, as it was then.
    await signStampManifest(dist, V1, await readSigningKey(keyA), { signedAt: '2026-01-01T00:00:00Z', validDays: 30 });
    expect((await register('sign', '--dist', dist, '--stamp', OLDEST, '--key', keyA)).ok).toBe(true);
    const s = await serve(dist, apiKeys, `${keyA}.pub`);
    const call = client(s.url);
    const v1 = await call('/api/v1/');
    expect(v1.status).toBe(503);
    expect(v1.json.error).toBe('artefact_corrupt');
    const next = await call('/api/next/');
    expect(next.status).toBe(503);
    expect(next.json.error).toBe('artefact_corrupt');
    await eventually('both refusals logged', async () => (await call('/api/v1/')).status === 503 && /expired at 2026-01-31T00:00:00Z/.test(s.err()) && new RegExp(`signed by key ${idB}, which is not trusted`).test(s.err()));
    await call('/api/v1/meta');
    expect(s.err().match(/expired at 2026-01-31T00:00:00Z/g)).toHaveLength(1);

    // A forged signature (a field changed under A's signature) in next's place: refused as not verifying.
    const sigFile = join(dist, NEXT, 'public', 'manifest.json.sig');
    const good = JSON.parse((await signedBy(keyA, dist, NEXT)).toString());
    writeFileSync(sigFile, JSON.stringify({ ...good, valid_until: '2099-01-01T00:00:00Z' }));
    await eventually('the forged signature refused', async () => (await call('/api/next/')).status === 503 && /signature does not verify/.test(s.err()));

    // Re-signed by the trusted key: served again without a restart.
    expect((await register('sign', '--dist', dist, '--stamp', V1, '--key', keyA)).ok).toBe(true);
    expect((await register('sign', '--dist', dist, '--stamp', NEXT, '--key', keyA)).ok).toBe(true);
    await eventually('served once re-signed', async () => (await call('/api/next/')).status === 200 && (await call('/api/v1/')).status === 200);
    expect((await call('/api/next/')).json.signing_key_id).toBe(idA);
  });
});

describe('serve --trust over a mirror', () => {
  it("checks the signatures over the origin's bytes: a stamp signed by an untrusted key answers 503, the other is served", async () => {
    // The public part as publish-public.sh uploads it, on a static host; next re-signed by B (not trusted).
    const dist = copyDist();
    expect((await register('sign', '--dist', dist, '--stamp', NEXT, '--key', keyB)).ok).toBe(true);
    expect((await register('sign', '--dist', dist, '--stamp', OLDEST, '--key', keyA)).ok).toBe(true); // index.json by A
    const pub = mkdtempSync(join(tmpdir(), 'ir-signed-public-'));
    copies.push(pub);
    const published = await runToExit('bash', [join(ROOT, 'scripts/publish-public.sh'), dist, pub]);
    expect(published.status, published.stderr).toBe(0);
    expect(readFileSync(join(pub, 'index.json.sig'))).toEqual(readFileSync(join(dist, 'index.json.sig')));
    const host = await serveDir(pub);
    try {
      const s = await serve(host.baseUrl, apiKeys, `${keyA}.pub`);
      const call = client(s.url);
      const v1 = await call('/api/v1/meta', { key: apiKey });
      expect(v1.status).toBe(200);
      expect(v1.json.signing_key_id).toBe(idA);
      const next = await call('/api/next/');
      expect(next.status).toBe(503);
      expect(next.json.error).toBe('artefact_corrupt');
      await eventually('the refusal logged', async () => (await call('/api/next/')).status === 503 && new RegExp(`${NEXT}/public/manifest.json.sig: signed by key ${idB}, which is not trusted`).test(s.err()));
    } finally {
      await host.close();
    }
  });
});

/** NEXT's manifest signature by `key` (signing a scratch copy, so `dist` keeps what the test put there). */
async function signedBy(key: string, dist: string, stamp: string): Promise<Buffer> {
  const scratch = mkdtempSync(join(tmpdir(), 'ir-signed-scratch-'));
  copies.push(scratch);
  cpSync(dist, scratch, { recursive: true });
  expect((await register('sign', '--dist', scratch, '--stamp', stamp, '--key', key)).ok).toBe(true);
  return readFileSync(join(scratch, stamp, 'public', 'manifest.json.sig'));
}
