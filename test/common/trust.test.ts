// common/trust.ts, the one trust check: its rollback rule, the mark it keeps (raised only by what is accepted), and
// the Node driver that persists the mark (common/trust-mark-file.ts): written whole or not at all, a damaged mark
// refused rather than read as empty. In-process: the subject is the module (the restart over a socket is in
// test/runtime/release/trust-restart.test.ts).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSigningKey, parsePublicKey, parseSigningKey, signBytes, SIGNS_INDEX, SIGNS_MANIFEST, trustedKeys } from '../../common/signing.ts';
import { decodeMark, EMPTY_MARK, encodeMark, memoryMarkStore, rollbackOf, TrustedSet, type IndexVerdict, type MarkStore, type TrustMark } from '../../common/trust.ts';
import type { SignatureDoc } from '../../common/signing.ts';
import { fileMarkStore, TRUST_MARK_FILE } from '../../common/trust-mark-file.ts';

const NOW = new Date('2026-11-02T00:00:00Z');

/** The accepted signature of a verdict that must be ok. */
function docOf(v: IndexVerdict): SignatureDoc {
  if (!v.ok) throw new Error(`expected accepted, got ${v.message}`);
  return v.doc;
}
const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'ir-trust-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the rollback rule', () => {
  const mark: TrustMark = { indexSignedAt: '2026-10-15T00:00:00Z', v1: '20261008T000000Z', next: '20261015T000000Z' };
  it('refuses an index signed before the newest accepted, or pointing a namespace at an older stamp; nothing else', () => {
    expect(rollbackOf(mark, { signedAt: '2026-10-14T23:59:59Z', pointers: null })).toMatch(/signed at 2026-10-14T23:59:59Z, older than 2026-10-15T00:00:00Z already accepted/);
    expect(rollbackOf(mark, { signedAt: '2026-10-15T00:00:00Z', pointers: { v1: '20261008T000000Z', next: '20261015T000000Z' } })).toBeNull();
    expect(rollbackOf(mark, { signedAt: '2026-11-01T00:00:00Z', pointers: { v1: '20261001T000000Z', next: '20261015T000000Z' } })).toMatch(/names 20261001T000000Z for v1, older than 20261008T000000Z/);
    expect(rollbackOf(mark, { signedAt: '2026-11-01T00:00:00Z', pointers: { v1: null, next: '20261022T000000Z' } })).toBeNull();
    // Pinned (pointers null): only the signature's age counts.
    expect(rollbackOf(mark, { signedAt: '2026-11-01T00:00:00Z', pointers: null })).toBeNull();
    expect(rollbackOf(EMPTY_MARK, { signedAt: '2020-01-01T00:00:00Z', pointers: { v1: '20200101T000000Z', next: null } })).toBeNull();
  });
});

describe('TrustedSet', async () => {
  const made = await generateSigningKey();
  const key = await parseSigningKey(made.privateKeyFile);
  const trusted = trustedKeys([await parsePublicKey(made.publicKeyText)]);
  const index = (next: string) => `{"v1":"${next}","next":"${next}"}`;
  const sign = (text: string, stamp: string, signedAt: string) => signBytes(text, key, { signs: SIGNS_INDEX, stamp, signedAt });
  const pointers = (s: string) => ({ v1: s, next: s });

  it('accepts a signed index, raises and saves the mark only when told, then refuses an older one', async () => {
    const store = memoryMarkStore();
    const set = await TrustedSet.open({ trusted, store });
    const a = await sign(index('20261015T000000Z'), '20261015T000000Z', '2026-10-15T00:00:00Z');
    const v = await set.checkIndex(a, index('20261015T000000Z'), { stamp: '20261015T000000Z', pointers: pointers('20261015T000000Z'), now: NOW });
    expect(v.ok).toBe(true);
    expect(await store.load()).toBeNull(); // checked, not yet accepted
    await set.accept(docOf(v), pointers('20261015T000000Z'));
    expect(await store.load()).toEqual({ indexSignedAt: '2026-10-15T00:00:00Z', v1: '20261015T000000Z', next: '20261015T000000Z' });

    const b = await sign(index('20261008T000000Z'), '20261008T000000Z', '2026-10-08T00:00:00Z');
    const old = await set.checkIndex(b, index('20261008T000000Z'), { stamp: '20261008T000000Z', pointers: pointers('20261008T000000Z'), now: NOW });
    expect(old).toMatchObject({ ok: false, reason: 'rollback', message: expect.stringMatching(/^index\.json\.sig: signed at 2026-10-08/) });
    // A newer signature over an index pointing back: refused for where it points, naming index.json.
    const c = await sign(index('20261008T000000Z'), '20261008T000000Z', '2026-10-20T00:00:00Z');
    const back = await set.checkIndex(c, index('20261008T000000Z'), { stamp: '20261008T000000Z', pointers: pointers('20261008T000000Z'), now: NOW });
    expect(back).toMatchObject({ ok: false, reason: 'rollback', pointer: true, message: expect.stringMatching(/^index\.json: names 20261008T000000Z for v1/) });
    // A restart over the same store starts from the saved mark.
    const again = await TrustedSet.open({ trusted, store });
    expect((await again.checkIndex(b, index('20261008T000000Z'), { stamp: '20261008T000000Z', pointers: null, now: NOW })).ok).toBe(false);
  });

  it('checks a manifest by its bytes or their sha256; other failures are the signature\'s own', async () => {
    const set = await TrustedSet.open({ trusted });
    const bytes = '{"stamp":"20261015T000000Z","files":{}}';
    const sig = await signBytes(bytes, key, { signs: SIGNS_MANIFEST, stamp: '20261015T000000Z', signedAt: '2026-10-15T00:00:00Z' });
    expect((await set.checkManifest(sig, { bytes }, '20261015T000000Z', NOW)).ok).toBe(true);
    const sha = [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(bytes)))].map((b) => b.toString(16).padStart(2, '0')).join('');
    expect((await set.checkManifest(sig, { sha256: sha }, '20261015T000000Z', NOW)).ok).toBe(true);
    expect(await set.checkManifest(sig, { bytes }, '20261015T000000Z', new Date('2027-06-01T00:00:00Z'))).toMatchObject({ ok: false, reason: 'expired' });
    expect(await set.checkManifest(null, { bytes }, '20261015T000000Z', NOW)).toMatchObject({ ok: false, reason: 'missing' });
  });

  it('starts from the newer of the stored mark and the evidence given; read-only saves nothing', async () => {
    const store = memoryMarkStore();
    await store.save({ indexSignedAt: '2026-10-01T00:00:00Z', v1: null, next: '20261001T000000Z' });
    const set = await TrustedSet.open({ trusted, store, evidence: { next: '20261015T000000Z' }, readOnly: true });
    expect(set.mark).toEqual({ indexSignedAt: '2026-10-01T00:00:00Z', v1: null, next: '20261015T000000Z' });
    const a = await sign(index('20261022T000000Z'), '20261022T000000Z', '2026-10-22T00:00:00Z');
    const v = await set.checkIndex(a, index('20261022T000000Z'), { stamp: '20261022T000000Z', pointers: pointers('20261022T000000Z'), now: NOW });
    await set.accept(docOf(v), pointers('20261022T000000Z'));
    expect(set.mark.next).toBe('20261022T000000Z');
    expect((await store.load())!.next).toBe('20261001T000000Z');
  });

  it('refuses to open over a damaged mark, and an accept whose save fails rejects', async () => {
    const damaged: MarkStore = { where: 'there', load: async () => decodeMark('{"format":"identity-register-trust-mark/1","v1":'), save: async () => {} };
    await expect(TrustedSet.open({ trusted, store: damaged })).rejects.toThrow(/^there: not a trust mark.*never read as empty/);
    const full: MarkStore = { where: 'full', load: async () => null, save: async () => { throw new Error('ENOSPC'); } };
    const set = await TrustedSet.open({ trusted, store: full });
    const a = await sign(index('20261015T000000Z'), '20261015T000000Z', '2026-10-15T00:00:00Z');
    const v = await set.checkIndex(a, index('20261015T000000Z'), { stamp: '20261015T000000Z', pointers: null, now: NOW });
    await expect(set.accept(docOf(v), null)).rejects.toThrow('ENOSPC');
  });
});

describe('the mark file (common/trust-mark-file.ts)', () => {
  const mark = (day: number): TrustMark => ({ indexSignedAt: `2026-10-${String(day).padStart(2, '0')}T00:00:00Z`, v1: null, next: `202610${String(day).padStart(2, '0')}T000000Z` });

  it('missing is "nothing accepted yet"; saved, it is one whole line and no temporary file stays', async () => {
    const dir = scratch();
    const store = fileMarkStore(dir);
    expect(await store.load()).toBeNull();
    await store.save(mark(15));
    expect(readFileSync(join(dir, TRUST_MARK_FILE), 'utf8')).toBe(encodeMark(mark(15)));
    expect(readdirSync(dir)).toEqual([TRUST_MARK_FILE]);
    expect(await store.load()).toEqual(mark(15));
  });

  it('is replaced whole: a reader during many saves always reads a complete mark, and a save never lowers it', async () => {
    const dir = scratch();
    const store = fileMarkStore(dir);
    await store.save(mark(1));
    let reading = true;
    const seen: string[] = [];
    const reader = (async () => {
      while (reading) seen.push(await readFile(join(dir, TRUST_MARK_FILE), 'utf8'));
    })();
    // Two writers over one folder (a server and a pull beside it), in no particular order.
    const other = fileMarkStore(dir);
    try {
      for (let day = 2; day <= 28; day++) await Promise.all([store.save(mark(day)), other.save(mark(day - 1))]);
    } finally {
      reading = false;
      await reader;
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const text of seen) expect(() => decodeMark(text)).not.toThrow();
    expect(await store.load()).toEqual(mark(28));
  });

  it('a crash mid-write leaves the previous mark (the temporary file is not read); a torn mark file is refused, never read as empty', async () => {
    const dir = scratch();
    const store = fileMarkStore(dir);
    await store.save(mark(15));
    // What a write killed before its rename leaves: a partial temporary file beside the whole mark.
    writeFileSync(join(dir, `.${TRUST_MARK_FILE}.99999.tmp`), encodeMark(mark(20)).slice(0, 12));
    expect(await store.load()).toEqual(mark(15));
    // A mark file damaged in place (not by this code: it never writes in place).
    writeFileSync(join(dir, TRUST_MARK_FILE), encodeMark(mark(15)).slice(0, 30));
    await expect(store.load()).rejects.toThrow(/not a trust mark/);
    const keys = trustedKeys([await parsePublicKey((await generateSigningKey()).publicKeyText)]);
    await expect(TrustedSet.open({ trusted: keys, store })).rejects.toThrow(new RegExp(`${TRUST_MARK_FILE}: not a trust mark`));
    expect(existsSync(join(dir, TRUST_MARK_FILE))).toBe(true);
  });
});
