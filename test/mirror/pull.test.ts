// `register pull` against a real static host on 127.0.0.1 (serve-handler, with Range): the public tree copied byte
// for byte and served; a pull killed mid-file resumed with Range; a second stamp fetching only what changed; a host
// that truncates or substitutes a file, or whose signatures are wrong, untrusted, expired or rolled back, refused
// naming the file, with the stamp already pulled still served.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FILE, ORIGIN_INDEX_FILE, type DistIndex, INDEX_SIG_FILE, manifestSigPath } from '../../common/dist-layout.ts';
import { RegisterError } from '../../common/errors.ts';
import { openIndex, sealIndex } from '../../common/index-file.ts';
import { readSigningKey, readTrust, signDistIndex, signStampManifest, writeNewSigningKey } from '../../common/signing-files.ts';
import { TRUST_MARK_FILE } from '../../common/trust-mark-file.ts';
import { signBytes, SIGNS_INDEX, type TrustedKeys } from '../../common/signing.ts';
import { pull } from '../../mirror/pull.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime } from '../../runtime/server.ts';
import { client } from '../helpers/api-client.ts';
import { runToExit } from '../helpers/run-command.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { ID, makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';

const BIN = fileURLToPath(new URL('../../bin/register.mjs', import.meta.url));
const [S1, S2, S3] = STAMPS;
const ORIGIN_SIG = `${ORIGIN_INDEX_FILE}.sig`;

let world: World;
let root: string;
let upload: string;
let host: ServedDir;
let keyPub: string;
let otherPub: string;
let trusted: TrustedKeys;
let keysFile: string;
let apiKey: string;

/** Every file under `dir` (relative paths, sorted), skipping nothing: a pulled tree must hold no leftovers. */
const tree = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
const same = (a: string, b: string): void => {
  expect(tree(b)).toEqual(tree(a));
  for (const f of tree(a)) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
};
const fresh = (name: string): string => join(root, name);
const quiet = () => {};

const PUBLISHED_AT = '2026-10-15T00:00:00Z';
const BEFORE_S3 = '2026-10-08T00:00:00Z';

beforeAll(async () => {
  world = await makeHandWorld();
  root = mkdtempSync(join(tmpdir(), 'ir-pull-'));
  // What publish-public.sh uploads, signed: index.json and each <stamp>/public, with their signatures.
  upload = join(root, 'upload');
  mkdirSync(upload);
  cpSync(join(world.dist, INDEX_FILE), join(upload, INDEX_FILE));
  for (const s of STAMPS) cpSync(join(world.dist, s, 'public'), join(upload, s, 'public'), { recursive: true });
  const keyFile = join(root, 'release.key');
  keyPub = (await writeNewSigningKey(keyFile)).publicKeyPath;
  otherPub = (await writeNewSigningKey(join(root, 'other.key'))).publicKeyPath;
  const key = await readSigningKey(keyFile);
  // Dated as when S3 was published, so an index signed earlier (S3 not yet out) is an older one.
  for (const s of STAMPS) await signStampManifest(upload, s, key, { signedAt: PUBLISHED_AT });
  await signDistIndex(upload, key, { signedAt: PUBLISHED_AT });
  trusted = await readTrust([keyPub]);
  host = await serveDir(upload);
  keysFile = join(root, 'keys.json');
  apiKey = (await addKey({ file: keysFile, name: 'p', quota: 100000, rate: 100000, provider: 'opta' })).key;
});
afterAll(async () => {
  await host?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const gets = (from: number, match: RegExp) => host.log.slice(from).filter((q) => q.method === 'GET' && match.test(q.url));

describe('register pull', () => {
  it('copies the public tree byte for byte, with its signatures, and `register serve --dist` serves it as the origin does', async () => {
    const out = fresh('full');
    const r = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--trust', keyPub]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`\\[pull\\] ${S2}: \\d+ files, \\d+ linked, \\d+ patched \\(.+\\), \\d+ fetched whole \\(.+\\): moved .+ of .+ \\(\\d+\\.\\d%\\)`));
    // Beside the copy, the rollback mark of --trust (common/trust.ts): what this copy accepted, never gone back on.
    const mark = JSON.parse(readFileSync(join(out, TRUST_MARK_FILE), 'utf8'));
    expect(mark).toMatchObject({ index_signed_at: PUBLISHED_AT, next: openIndex(readFileSync(join(upload, INDEX_FILE), 'utf8')).next });
    rmSync(join(out, TRUST_MARK_FILE));
    same(upload, out);
    // Nothing private on a public host, so nothing private in the copy.
    expect(tree(out).some((f) => f.includes('private'))).toBe(false);

    const local = await startRuntime({ dist: world.dist, keys: keysFile, state: join(root, 'state-origin'), port: 0, log: quiet });
    const problems: string[] = [];
    // Served with --trust: the copy carries the signatures serve checks.
    const mirror = await startRuntime({ dist: out, keys: keysFile, state: join(root, 'state-pulled'), port: 0, log: quiet, problems: (r) => problems.push(r.line), trust: trusted });
    try {
      const a = client(local.url + '/api/v1', apiKey);
      const b = client(mirror.url + '/api/v1', apiKey);
      for (const p of [`/entities/${ID.arsenal}?include=aliases,bridges,relationships,overlay`, '/resolve/transfermarkt/11?namespace=verein', '/search?q=arsenal', '/changes?limit=5']) {
        const [x, y] = await Promise.all([a(p), b(p)]);
        expect(y.status, p).toBe(x.status);
        expect(y.text, p).toBe(x.text);
      }
      // `/` names the key that signed the served stamp, which only a trusting server knows; the rest is the same.
      const [x, y] = await Promise.all([a('/'), b('/')]);
      expect(y.json).toEqual({ ...x.json, signing_key_id: [...trusted.keys()][0] });
      // Notices live in the private part, which no public host has: 503, nothing charged, the log saying why.
      const notices = await b('/notices');
      expect([notices.status, notices.json.error]).toEqual([503, 'artefact_corrupt']);
      expect(problems.join('\n')).toContain(`${join(out, S2, 'private', 'manifest.json')}: not found: this dist holds no private part`);
    } finally {
      await local.close();
      await mirror.close();
    }

    // `register verify` checks what a pulled copy holds (the sealed, signed index; each public manifest against it;
    // every public file) and says the private part is not held, which is no failure for a public-only copy.
    const verify = () => runToExit(process.execPath, [BIN, 'verify', '--dist', out, '--trust', keyPub]);
    const ok = await verify();
    expect(ok.status, ok.stderr).toBe(0);
    for (const s of STAMPS) {
      expect(ok.stderr).toContain(`[verify] ${s}: ok, signed by `);
      expect(ok.stderr).toContain(`[verify] ${s}: public part only: the private part (manifest.json, private/) is not held here`);
    }
    // One byte changed in a pulled file: exit 1, naming it.
    const victim = join(out, S2, 'public', 'release.json');
    const bytes = readFileSync(victim);
    bytes[bytes.length >> 1] ^= 1;
    writeFileSync(victim, bytes);
    const damaged = await verify();
    expect(damaged.status).toBe(1);
    expect(damaged.stderr).toMatch(new RegExp(`\\[verify\\] ${S2}/public/release\\.json: sha256 [0-9a-f]{64} does not match the manifest`));
    // A private part that is there is checked, never taken for one not held: a stray private file without the stamp
    // manifest is a failure.
    mkdirSync(join(out, S1, 'private'));
    writeFileSync(join(out, S1, 'private', 'notices.json'), '{}');
    const partial = await verify();
    expect(partial.status).toBe(1);
    expect(partial.stderr).toContain(`[verify] ${S1}/manifest.json: missing or unreadable`);
  });

  it('resumes a pull killed mid-file with a Range request, and completes with the same tree', async () => {
    const out = fresh('killed');
    const target = `${S1}/public/release.json`;
    const size = statSync(join(upload, target)).size;
    const half = Math.floor(size / 2);
    const held: import('node:http').ServerResponse[] = [];
    // The host sends half of one file, then nothing more: the kill lands while that file is partly written.
    host.hook = (req, res) => {
      if (req.url !== `/${target}` || req.headers.range) return false;
      res.writeHead(200, { 'content-length': String(size), 'content-type': 'application/json' });
      res.write(readFileSync(join(upload, target)).subarray(0, half));
      held.push(res);
      return true;
    };
    const from = host.log.length;
    let completed: string[] = [];
    try {
      const child = spawn(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--stamp', S1], { stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const part = join(out, '.pull', S1, 'public', 'release.json.part');
      const deadline = Date.now() + 60_000;
      while (!(existsSync(part) && statSync(part).size >= half) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGKILL');
      await exited;
      expect(statSync(part).size).toBe(half);
      completed = tree(join(out, '.pull', S1, 'public')).filter((f) => !f.endsWith('.part')).map((f) => `/${S1}/public/${f}`);
      // Nothing half-fetched is served: no stamp folder, no index.
      expect(existsSync(join(out, S1))).toBe(false);
      expect(existsSync(join(out, INDEX_FILE))).toBe(false);
    } finally {
      host.hook = null;
      for (const res of held) res.destroy();
    }
    // A file the manifest does not list, left in the staging folder (a stamp the origin rebuilt since), is not carried in.
    writeFileSync(join(out, '.pull', S1, 'public', 'stray.bin'), 'left over');
    const again = host.log.length;
    const r = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--stamp', S1]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 resumed/);
    expect(gets(again, new RegExp(`^/${target}$`)).map((q) => q.range)).toEqual([`bytes=${half}-`]);
    expect(gets(from, new RegExp(`^/${target}$`)).length).toBe(2);
    // Files the first run completed (checked, under their own names) are not fetched again.
    expect(gets(again, /./).filter((q) => completed.includes(q.url))).toEqual([]);
    const expected = fresh('killed-expected');
    mkdirSync(expected);
    cpSync(join(upload, S1), join(expected, S1), { recursive: true });
    rmSync(join(expected, manifestSigPath(S1))); // pulled without --trust: no signature to keep
    const ownIndex = readFileSync(join(out, INDEX_FILE), 'utf8');
    expect(openIndex(ownIndex)).toMatchObject({ v1: S1, next: S1, releases: [{ stamp: S1 }] });
    rmSync(join(out, INDEX_FILE));
    same(expected, out);
  });

  it('fetches, for a second stamp, only the files that changed; the rest are linked from the first', async () => {
    const out = fresh('second');
    await pull({ origin: host.baseUrl, out, stamp: S1, trusted, log: quiet });
    expect(existsSync(join(out, INDEX_SIG_FILE))).toBe(false); // an index of its own is signed by no one
    // ...but the origin's signed index it verified is kept verbatim beside it, for `serve --trust`.
    expect(readFileSync(join(out, ORIGIN_INDEX_FILE)).equals(readFileSync(join(upload, INDEX_FILE)))).toBe(true);
    expect(readFileSync(join(out, ORIGIN_SIG)).equals(readFileSync(join(upload, INDEX_SIG_FILE)))).toBe(true);
    // The kept one is the rollback mark: an origin index signed before it (S3 not yet published) is refused, not kept.
    const keptIndex = [readFileSync(join(upload, INDEX_FILE)), readFileSync(join(upload, INDEX_SIG_FILE))] as const;
    const published = openIndex(keptIndex[0].toString('utf8'));
    const olderText = sealIndex({ ...published, v1: S2, next: S2, releases: published.releases.filter((r) => r.stamp !== S3) });
    try {
      writeFileSync(join(upload, INDEX_FILE), olderText);
      writeFileSync(join(upload, INDEX_SIG_FILE), await signBytes(olderText, await readSigningKey(join(root, 'release.key')), { signs: SIGNS_INDEX, stamp: S2, signedAt: BEFORE_S3 }));
      const e = await pull({ origin: host.baseUrl, out, stamp: S2, trusted, log: quiet }).then(() => 'pulled', (x: Error) => x.message);
      expect(e).toMatch(/index\.json: refused \(rollback\)/);
    } finally {
      writeFileSync(join(upload, INDEX_FILE), keptIndex[0]);
      writeFileSync(join(upload, INDEX_SIG_FILE), keptIndex[1]);
    }
    expect(readFileSync(join(out, ORIGIN_INDEX_FILE)).equals(keptIndex[0])).toBe(true);
    const from = host.log.length;
    const result = await pull({ origin: host.baseUrl, out, stamp: S2, trusted, log: quiet });
    const m1 = JSON.parse(readFileSync(join(upload, S1, 'public/manifest.json'), 'utf8')).files as Record<string, { sha256: string }>;
    const m2 = JSON.parse(readFileSync(join(upload, S2, 'public/manifest.json'), 'utf8')).files as Record<string, { sha256: string }>;
    const known = new Set(Object.values(m1).map((f) => f.sha256));
    const changed = Object.entries(m2).filter(([, f]) => !known.has(f.sha256)).map(([p]) => `/${S2}/public/${p}`).sort();
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(Object.keys(m2).length);
    const fetched = gets(from, new RegExp(`^/${S2}/public/(?!manifest\\.json)`)).map((q) => q.url).sort();
    expect(fetched).toEqual(changed);
    expect(result.stamps[0]).toMatchObject({ fetched: changed.length, linked: Object.keys(m2).length - changed.length });
    expect(statSync(join(out, S2, 'public', Object.keys(m2).find((p) => known.has(m2[p].sha256))!)).nlink).toBeGreaterThan(1);
    expect(openIndex(readFileSync(join(out, INDEX_FILE), 'utf8'))).toMatchObject({ v1: S2, next: S2 });
    // With every stamp held, index.json and its signature are the origin's own bytes.
    await pull({ origin: host.baseUrl, out, stamp: S3, trusted, log: quiet });
    expect(readFileSync(join(out, INDEX_FILE)).equals(readFileSync(join(upload, INDEX_FILE)))).toBe(true);
    expect(readFileSync(join(out, INDEX_SIG_FILE)).equals(readFileSync(join(upload, INDEX_SIG_FILE)))).toBe(true);
    // A full copy needs nothing beside them.
    expect([existsSync(join(out, ORIGIN_INDEX_FILE)), existsSync(join(out, ORIGIN_SIG))]).toEqual([false, false]);
  });

  it('serves a copy holding one stamp with --trust, vouched for by the origin\'s signed index kept beside it; a local edit or a missing or foreign origin signature is refused (503, one log line naming why)', async () => {
    const out = fresh('one-stamp');
    const pulled = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--stamp', S2, '--trust', keyPub]);
    expect(pulled.status, pulled.stderr).toBe(0);
    const serveOnce = async (name: string) => {
      const problems: string[] = [];
      const rt = await startRuntime({ dist: out, keys: keysFile, state: join(root, `state-one-${name}`), port: 0, log: quiet, problems: (p) => problems.push(p.line), trust: trusted });
      try {
        const api = client(rt.url + '/api/v1', apiKey);
        return { root: await api('/'), entity: await api(`/entities/${ID.arsenal}`), problems };
      } finally {
        await rt.close();
      }
    };
    const good = await serveOnce('good');
    expect([good.root.status, good.entity.status], good.problems.join('\n')).toEqual([200, 200]);
    expect(good.root.headers.get('x-register-release-stamp')).toBe(S2);
    expect(good.root.json.signing_key_id).toBe([...trusted.keys()][0]);
    expect(good.problems).toEqual([]);

    const own = readFileSync(join(out, INDEX_FILE), 'utf8');
    const index = openIndex(own);
    const originSig = join(out, ORIGIN_SIG);
    const keptSig = readFileSync(originSig);
    const other = await readSigningKey(join(root, 'other.key'));
    const forged = 'f'.repeat(64);
    const unlisted = '20261009T000000Z';
    const edits: [string, () => Promise<void> | void, string][] = [
      ['other-hash', () => writeFileSync(join(out, INDEX_FILE), sealIndex({ ...index, releases: index.releases.map((r) => ({ ...r, sha256: { ...r.sha256, public: forged } })) })),
        `${join(out, INDEX_FILE)}: is not signed and lists ${S2} with public manifest sha256 ${forged}, the signed ${ORIGIN_INDEX_FILE} `],
      ['unlisted', () => writeFileSync(join(out, INDEX_FILE), sealIndex({ ...index, releases: [...index.releases, { ...index.releases[0], stamp: unlisted }] })),
        `${join(out, INDEX_FILE)}: is not signed and lists ${unlisted}, which the signed ${ORIGIN_INDEX_FILE} does not list`],
      ['sig-removed', () => rmSync(originSig), `${originSig}: no signature`],
      ['sig-foreign', async () => writeFileSync(originSig, await signBytes(readFileSync(join(out, ORIGIN_INDEX_FILE)), other, { signs: SIGNS_INDEX, stamp: S3 })),
        `${originSig}: signed by key ${other.keyId}, which is not trusted`],
    ];
    for (const [name, edit, why] of edits) {
      writeFileSync(join(out, INDEX_FILE), own);
      writeFileSync(originSig, keptSig);
      await edit();
      const bad = await serveOnce(name);
      expect([bad.root.status, bad.root.json.error, bad.entity.status], name).toEqual([503, 'artefact_corrupt', 503]);
      expect(bad.problems, name).toHaveLength(1);
      expect(bad.problems[0], name).toContain(why);
    }
  });

  it('refuses a host that truncates or substitutes a file, naming it (exit 1); the stamp pulled before is still served', async () => {
    const out = fresh('refused');
    await pull({ origin: host.baseUrl, out, stamp: S1, log: quiet });
    const before = readFileSync(join(out, INDEX_FILE));
    const m2 = JSON.parse(readFileSync(join(upload, S2, 'public/manifest.json'), 'utf8')).files as Record<string, { sha256: string; bytes: number }>;
    const m1 = JSON.parse(readFileSync(join(upload, S1, 'public/manifest.json'), 'utf8')).files as Record<string, { sha256: string }>;
    const known = new Set(Object.values(m1).map((f) => f.sha256));
    // A file S2 changed (so it is fetched, not linked), big enough to cut.
    const victim = Object.keys(m2).filter((p) => !known.has(m2[p].sha256) && m2[p].bytes > 100).sort()[0];
    const url = `/${S2}/public/${victim}`;
    const bytes = readFileSync(join(upload, S2, 'public', victim));
    const misbehave = (body: Buffer) => (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      if (req.url !== url) return false;
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
      return true;
    };
    try {
      host.hook = misbehave(bytes.subarray(0, bytes.length - 7));
      const r = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--stamp', S2]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${host.baseUrl}${S2}/public/${victim}: the host sent ${bytes.length - 7} of the ${bytes.length} bytes the manifest lists`);

      const swapped = Buffer.from(bytes);
      swapped[10] ^= 0x20;
      host.hook = misbehave(swapped);
      const e = await pull({ origin: host.baseUrl, out, stamp: S2, log: quiet }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RegisterError);
      expect((e as Error).message).toContain(`${host.baseUrl}${S2}/public/${victim}: sha256 `);
      expect((e as Error).message).toContain('does not match the manifest');
    } finally {
      host.hook = null;
    }
    expect(readFileSync(join(out, INDEX_FILE)).equals(before)).toBe(true);
    expect(existsSync(join(out, S2))).toBe(false);
    const mirror = await startRuntime({ dist: out, keys: keysFile, state: join(root, 'state-refused'), port: 0, log: quiet, problems: quiet });
    try {
      const r = await client(mirror.url + '/api/v1', apiKey)('/meta');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-register-release-stamp')).toBe(S1);
    } finally {
      await mirror.close();
    }
  });

  it('refuses signatures from an untrusted key, a replaced signature, an expired one and an older signed index.json put back', async () => {
    const out = fresh('signed');
    const refusal = (p: Promise<unknown>) => p.then(() => 'pulled', (e: Error) => e.message);
    const untrusted = await readTrust([otherPub]);
    expect(await refusal(pull({ origin: host.baseUrl, out, trusted: untrusted, log: quiet }))).toMatch(/index\.json: refused \(untrusted_key\): index\.json\.sig: signed by key [0-9a-f]{16}, which is not trusted/);
    // Far past valid_until.
    expect(await refusal(pull({ origin: host.baseUrl, out, trusted, now: () => new Date('2099-01-01T00:00:00Z'), log: quiet }))).toMatch(/refused \(expired\)/);

    // S2's manifest signature replaced by S1's (an authentic signature, of other bytes).
    const sig2 = join(upload, manifestSigPath(S2));
    const kept = readFileSync(sig2);
    try {
      cpSync(join(upload, manifestSigPath(S1)), sig2);
      const m = await refusal(pull({ origin: host.baseUrl, out, stamp: S2, trusted, log: quiet }));
      expect(m).toContain(`${host.baseUrl}${S2}/public/manifest.json: refused (other_bytes)`);
      expect(existsSync(join(out, S2))).toBe(false);
    } finally {
      writeFileSync(sig2, kept);
    }

    // The whole release pulled; then the host puts back an index signed before S3 was published.
    await pull({ origin: host.baseUrl, out, trusted, log: quiet });
    const served = readFileSync(join(out, INDEX_FILE));
    const index = openIndex(readFileSync(join(upload, INDEX_FILE), 'utf8'));
    const older: DistIndex = { ...index, v1: S2, next: S2, releases: index.releases.filter((r) => r.stamp !== S3) };
    const olderText = sealIndex(older);
    const key = await readSigningKey(join(root, 'release.key'));
    const keptIndex = [readFileSync(join(upload, INDEX_FILE)), readFileSync(join(upload, INDEX_SIG_FILE))] as const;
    try {
      writeFileSync(join(upload, INDEX_FILE), olderText);
      writeFileSync(join(upload, INDEX_SIG_FILE), await signBytes(olderText, key, { signs: SIGNS_INDEX, stamp: S2, signedAt: BEFORE_S3 }));
      const r = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out, '--trust', keyPub]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${host.baseUrl}index.json: refused (rollback): index.json.sig: signed at ${BEFORE_S3}, older than ${PUBLISHED_AT} already accepted`);
      // The mark beside the copy refuses it by itself, with the signatures held here gone.
      rmSync(join(out, INDEX_SIG_FILE));
      const again = await refusal(pull({ origin: host.baseUrl, out, trusted, log: quiet }));
      expect(again).toMatch(/refused \(rollback\)/);
      // Without --trust, the host's own listing tells: its newest stamp is older than the one held.
      const unsigned = await refusal(pull({ origin: host.baseUrl, out, log: quiet }));
      expect(unsigned).toContain(`its newest stamp ${S2} is older than ${S3}`);
    } finally {
      writeFileSync(join(upload, INDEX_FILE), keptIndex[0]);
      writeFileSync(join(upload, INDEX_SIG_FILE), keptIndex[1]);
    }
    expect(readFileSync(join(out, INDEX_FILE)).equals(served)).toBe(true);
  });

  it.runIf(spawnSync('script', ['--version']).status === 0)('draws bytes, a total and an ETA on a terminal; piped, only its summary lines', async () => {
    const command = [process.execPath, BIN, 'pull', host.baseUrl, '--out', fresh('tty'), '--stamp', S1].map((a) => `'${a}'`).join(' ');
    const tty = await runToExit('script', ['-qec', command, '/dev/null'], { env: { ...process.env, TERM: 'xterm', COLUMNS: '200' } });
    expect(tty.status, tty.stdout).toBe(0);
    const lines = tty.stdout.split(/\x1b\[1G|\r|\n/).map((l) => l.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '').trim());
    expect(lines.some((l) => new RegExp(`^\\[pull\\] ${S1}: \\d+ files \\[[=-]{24}\\] [\\d,]+/[\\d,]+ bytes \\d+% \\([\\d,]+ bytes/s\\) ETA `).test(l)), lines.join('\n')).toBe(true);
    const piped = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', fresh('piped'), '--stamp', S1]);
    expect(piped.stderr.split('\n').filter(Boolean).every((l) => /^\[pull\] [^[]*$/.test(l) && !l.includes('\x1b')), piped.stderr).toBe(true);
  });

  it('takes its command line strictly: a bad ORIGIN or --stamp is exit 2, a stamp the origin lacks exit 1 naming it', async () => {
    const bad = await runToExit(process.execPath, [BIN, 'pull', 'ftp://x/', '--out', fresh('x')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/ORIGIN must be an http/);
    const missing = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', fresh('x'), '--stamp', '20990101T000000Z']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`${host.baseUrl}index.json: lists no release 20990101T000000Z`);
  });
});
