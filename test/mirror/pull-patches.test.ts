// `register pull` of a successor whose predecessor the copy holds, against a real static host on 127.0.0.1: the
// changed files made from the stamp's zstd patches, fewer bytes moved than the stamp's size, the copy byte for byte
// the origin's and passing `register verify`; a damaged patch on the host falls back to the whole file, named; a copy
// holding no predecessor fetches files whole and no patch.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FILE } from '../../common/dist-layout.ts';
import { PATCHES_FILE, type PatchesDoc } from '../../common/zstd-patch.ts';
import { pull } from '../../mirror/pull.ts';
import { compiledSamplesWithPatches } from '../fixtures/compiled-fixtures.ts';
import { runToExit } from '../helpers/run-command.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';

const BIN = fileURLToPath(new URL('../../bin/register.mjs', import.meta.url));

type Files = Record<string, { bytes: number; sha256: string }>;

let root: string;
let upload: string;
let host: ServedDir;
let S1: string;
let S2: string;
let m2: Files;
let patches: PatchesDoc;

/** Every file under `dir` (relative paths, sorted). */
const tree = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
/** `b` holds exactly `a`'s files, less those `leaveOut` names, with the same bytes. */
const same = (a: string, b: string, leaveOut: (f: string) => boolean = () => false): void => {
  const want = tree(a).filter((f) => !leaveOut(f));
  expect(tree(b)).toEqual(want);
  for (const f of want) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
};
const verify = (dist: string) => runToExit(process.execPath, [BIN, 'verify', '--dist', dist]);
const gets = (from: number) => host.log.slice(from).filter((q) => q.method === 'GET').map((q) => q.url);
const SUMMARY = /\[pull\] (\S+): (\d+) files, (\d+) linked, (\d+) patched \((.+?)\), (\d+) fetched whole \((.+?)\): moved (.+?) of (.+?) \((\d+\.\d)%\); every sha256 checked/;

beforeAll(async () => {
  const compiled = await compiledSamplesWithPatches();
  [S1, S2] = compiled.reports.map((r) => r.stamp);
  root = mkdtempSync(join(tmpdir(), 'ir-pull-patches-'));
  // What publish-public.sh uploads: index.json and each <stamp>/public.
  upload = join(root, 'upload');
  mkdirSync(upload);
  cpSync(join(compiled.dist, INDEX_FILE), join(upload, INDEX_FILE));
  for (const s of [S1, S2]) cpSync(join(compiled.dist, s, 'public'), join(upload, s, 'public'), { recursive: true });
  m2 = JSON.parse(readFileSync(join(upload, S2, 'public', 'manifest.json'), 'utf8')).files as Files;
  patches = JSON.parse(readFileSync(join(upload, S2, 'public', PATCHES_FILE), 'utf8')) as PatchesDoc;
  host = await serveDir(upload);
});
afterAll(async () => {
  await host?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('register pull with patches', () => {
  it('makes the changed files of a successor from its patches against the predecessor held, moving a fraction of its bytes', async () => {
    const targets = Object.keys(patches.files);
    expect(targets.length).toBeGreaterThan(4);
    const out = join(root, 'held');
    await pull({ origin: host.baseUrl, out, stamp: S1, log: () => {} });
    const from = host.log.length;
    const r = await runToExit(process.execPath, [BIN, 'pull', host.baseUrl, '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    const line = SUMMARY.exec(r.stderr.split('\n').find((l) => l.startsWith(`[pull] ${S2}:`)) ?? '');
    expect(line, r.stderr).not.toBeNull();
    const [, , files, , patched, , , , , , percent] = line!;
    expect(Number(patched)).toBe(targets.length);
    expect(Number(files)).toBe(Object.keys(m2).filter((p) => !p.startsWith('patches/')).length);
    expect(Number(percent)).toBeLessThan(100);
    // No target was fetched: each patch was, once.
    const fetched = gets(from);
    for (const t of targets) expect(fetched, t).not.toContain(`/${S2}/public/${t}`);
    expect(fetched.filter((u) => u.includes('/patches/')).sort()).toEqual(targets.map((t) => `/${S2}/public/${patches.files[t].patch}`).sort());
    // The result is the origin's public part byte for byte, patches included (each was used), and verifies.
    same(upload, out);
    for (const t of targets) expect(readFileSync(join(out, S2, 'public', t)).length).toBe(m2[t].bytes);
    const v = await verify(out);
    expect(v.status, v.stderr).toBe(0);
  });

  it('moves fewer bytes than the stamp holds, as its counts say', async () => {
    const out = join(root, 'counted');
    await pull({ origin: host.baseUrl, out, stamp: S1, log: () => {} });
    const lines: string[] = [];
    const { stamps: [s] } = await pull({ origin: host.baseUrl, out, stamp: S2, log: (l) => lines.push(l) });
    const patchBytes = Object.values(patches.files).reduce((n, e) => n + m2[e.patch].bytes, 0);
    expect(s.patched).toBe(Object.keys(patches.files).length);
    expect(s.patchedBytes).toBe(patchBytes);
    expect(s.fullBytes).toBe(Object.entries(m2).filter(([p]) => !p.startsWith('patches/')).reduce((n, [, f]) => n + f.bytes, 0));
    expect(s.fetchedBytes + s.patchedBytes).toBeLessThan(s.fullBytes);
    // What the patches replace is more than they are.
    expect(Object.keys(patches.files).reduce((n, t) => n + m2[t].bytes, 0)).toBeGreaterThan(2 * patchBytes);
    expect(lines.filter((l) => l.includes('its patch'))).toEqual([]);
  });

  it('resumes: a patch an interrupted pull left whole is used, not fetched again', async () => {
    const out = join(root, 'resumed');
    await pull({ origin: host.baseUrl, out, stamp: S1, log: () => {} });
    const [target, { patch }] = Object.entries(patches.files).sort()[0];
    // Where the killed run had put it: the stamp's staging folder.
    mkdirSync(join(out, '.pull', S2, 'public', patch, '..'), { recursive: true });
    cpSync(join(upload, S2, 'public', patch), join(out, '.pull', S2, 'public', patch));
    const from = host.log.length;
    const [s] = (await pull({ origin: host.baseUrl, out, stamp: S2, log: () => {} })).stamps;
    expect(gets(from)).not.toContain(`/${S2}/public/${patch}`);
    expect(gets(from)).not.toContain(`/${S2}/public/${target}`);
    expect(s.patched).toBe(Object.keys(patches.files).length);
    expect(s.patchedBytes).toBe(Object.values(patches.files).reduce((n, e) => n + m2[e.patch].bytes, 0) - m2[patch].bytes);
    same(join(upload, S2), join(out, S2));
  });

  it('fetches a file whole when its patch on the host is damaged, naming it, to the same bytes', async () => {
    const target = Object.keys(patches.files).sort((a, b) => m2[b].bytes - m2[a].bytes)[0];
    const patch = patches.files[target].patch;
    const onHost = join(upload, S2, 'public', patch);
    const kept = readFileSync(onHost);
    const out = join(root, 'damaged');
    await pull({ origin: host.baseUrl, out, stamp: S1, log: () => {} });
    const lines: string[] = [];
    const from = host.log.length;
    let s;
    try {
      const bad = Buffer.from(kept);
      bad[bad.length >> 1] ^= 0xff;
      writeFileSync(onHost, bad);
      [s] = (await pull({ origin: host.baseUrl, out, stamp: S2, log: (l) => lines.push(l) })).stamps;
    } finally {
      writeFileSync(onHost, kept);
    }
    expect(lines.filter((l) => l.includes('its patch'))).toEqual([
      expect.stringMatching(new RegExp(`^\\[pull\\] ${S2}: ${target}: fetched whole, its patch ${patch} was not used: sha256 [0-9a-f]{64} does not match the manifest`)),
    ]);
    expect(s.patched).toBe(Object.keys(patches.files).length - 1);
    expect(gets(from)).toContain(`/${S2}/public/${target}`);
    // Everything but the damaged patch, byte for byte; the copy verifies without it.
    same(upload, out, (f) => f === join(S2, 'public', patch));
    const v = await verify(out);
    expect(v.status, v.stderr).toBe(0);
  });

  it('fetches files whole and no patch into a copy holding no predecessor', async () => {
    const out = join(root, 'alone');
    const from = host.log.length;
    const lines: string[] = [];
    const [s] = (await pull({ origin: host.baseUrl, out, stamp: S2, log: (l) => lines.push(l) })).stamps;
    expect(gets(from).filter((u) => u.includes('/patches/'))).toEqual([]);
    expect(s).toMatchObject({ patched: 0, patchedBytes: 0, linked: 0 });
    expect(s.fetchedBytes).toBe(s.fullBytes);
    expect(SUMMARY.exec(lines.join('\n'))?.slice(4, 5)).toEqual(['0']);
    same(join(upload, S2), join(out, S2), (f) => f.startsWith('public/patches/'));
    const v = await verify(out);
    expect(v.status, v.stderr).toBe(0);
  });
});
