// Private notice files are checked field by field against the contract's ProviderNoticeFinding and refused with one
// line naming the file and a JSON path: nothing of a file's content (no value, no fragment, no stack trace) is
// printed, two files for one provider are refused naming both, and a file past its cap is not even read.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { MAX_NOTICE_DEPTH, MAX_NOTICE_FILE_BYTES, MAX_TEXT_BYTES } from '../../common/limits.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';
import { fresh, refused } from '../fixtures/refusals.ts';

const A = 'rt000000000000a1';
const STAMP = '20261001T000000Z';
const tables = (): Record<string, Rows> => ({ entities: [[A, 'team', 'active', 'Alpha', '', '', '', '', '']], bridges: [['acme', '', 't1', A, '']] });
/** What no refusal may print: it stands in every value of the files below. */
const SECRET = 'zq-SECRET-7f3a';

const finding = (id: string, provider = 'acme'): Record<string, unknown> => ({
  finding_id: id, provider, kind: 'score_outlier', title: `${SECRET} title`, provider_ref: `${SECRET}-ref`, source: { note: SECRET },
  observed: `${SECRET} 9-0`, expected: '1-0', severity: 'medium', suggested_action: null, payload: { secret: SECRET }, payload_hash: `${SECRET}-hash`,
  first_seen_at: '2026-09-01T00:00:00Z', last_seen_at: null,
});
const batch = (provider = 'acme', findings = [finding(`${SECRET}-1`, provider), finding(`${SECRET}-2`, provider)]): Record<string, unknown> => ({
  provider, batch_id: 7, generated_at: '2026-10-01T00:00:00Z', findings,
});

/** The refusal of a release whose only notice file is `content` (a batch, or raw text), checked for leaks. */
async function refusal(content: unknown, name = 'acme'): Promise<string> {
  const d = fresh();
  const raw = { [`private/notices/${name}.json`]: typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content) };
  writeHandRelease(d.releases, STAMP, tables(), { raw });
  const message = await refused(d);
  expect(message).not.toContain('SECRET');
  expect(message.split('\n')).toHaveLength(1);
  return message;
}

describe('a notice file that is not a valid batch', () => {
  it('is refused naming the file and the JSON path, and nothing of its content', async () => {
    const fields = (f: Record<string, unknown>, change: Record<string, unknown>, drop?: string) => {
      const out = { ...f, ...change };
      if (drop) delete out[drop];
      return out;
    };
    const f0 = finding(`${SECRET}-1`);
    const f1 = finding(`${SECRET}-2`);
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < MAX_NOTICE_DEPTH; i++) at = (at.next = {}) as Record<string, unknown>;
    const cases: [unknown, string][] = [
      [[batch()], '$: expected an object'],
      [{ ...batch(), batch_id: '7' }, '$.batch_id: expected a non-negative integer'],
      [{ ...batch(), batch_id: -1 }, '$.batch_id: expected a non-negative integer'],
      [fields(batch(), {}, 'generated_at'), '$.generated_at: missing'],
      [{ ...batch(), provider: '' }, '$.provider: expected a non-empty string'],
      [{ ...batch(), findings: { [SECRET]: f0 } }, '$.findings: expected an array'],
      [{ ...batch(), seen: true }, '$: its field number 5 is not one of provider, batch_id, generated_at, findings'],
      [batch('acme', [f0, fields(f1, { severity: 42 })]), '$.findings[1].severity: expected a string'],
      [batch('acme', [f0, fields(f1, {}, 'title')]), '$.findings[1].title: missing'],
      [batch('acme', [fields(f0, { [SECRET]: 1 })]), '$.findings[0]: its field number 15 is not one of finding_id, provider, kind, title, provider_ref, source, observed, expected, severity, suggested_action, payload, payload_hash, first_seen_at, last_seen_at'],
      [batch('acme', [fields(f0, { kind: '' })]), '$.findings[0].kind: expected a non-empty string'],
      [batch('acme', [fields(f0, { provider_ref: 0 })]), '$.findings[0].provider_ref: expected a string or null'],
      [batch('acme', [fields(f0, { source: [SECRET] })]), '$.findings[0].source: expected an object'],
      [batch('acme', [fields(f0, { payload: null })]), '$.findings[0].payload: expected an object'],
      [batch('acme', [fields(f0, { payload: deep })]), `$.findings[0].payload: nests deeper than ${MAX_NOTICE_DEPTH} levels, the cap MAX_NOTICE_DEPTH (docs/limits.md)`],
      [batch('acme', [fields(f0, { title: SECRET + 'x'.repeat(MAX_TEXT_BYTES) })]), `$.findings[0].title: is ${MAX_TEXT_BYTES + SECRET.length} bytes, over the ${MAX_TEXT_BYTES}-byte cap MAX_TEXT_BYTES (docs/limits.md)`],
      [batch('acme', [f0, fields(f1, { provider: 'other' })]), '$.findings[1].provider: differs from $.provider'],
      [batch('acme', [f0, f1, fields(f1, { title: 'again' }), fields(f0, {})]), '$.findings[2].finding_id: repeats the finding_id of $.findings[1]'],
      [batch('other'), '$.provider does not match the file name (<provider>.json)'],
      [`{"provider":"acme","batch_id":7,${SECRET}}`, 'not valid JSON (at character 33)'],
      [`{"provider":"acme","batch_id":7,"findings":["${SECRET}"`, `not valid JSON (at character ${47 + SECRET.length})`],
      [`{"provider":"acme" "${SECRET}":1}`, 'not valid JSON (at character 20)'],
      [Buffer.concat([Buffer.from(`{"provider":"acme","title":"${SECRET}`), Buffer.from([0xff, 0x22, 0x7d])]), `not valid UTF-8 (byte ${29 + SECRET.length})`],
    ];
    for (const [content, why] of cases) expect(await refusal(content)).toBe(`[compile] private/notices/acme.json: ${why}`);
  });

  it('is refused unread past MAX_NOTICE_FILE_BYTES', async () => {
    // Valid JSON at its start, then white space: only its size is wrong.
    const padded = Buffer.alloc(MAX_NOTICE_FILE_BYTES + 1, 0x20);
    padded.write(JSON.stringify(batch()));
    expect(await refusal(padded)).toBe(`[compile] private/notices/acme.json: is ${MAX_NOTICE_FILE_BYTES + 1} bytes, over the ${MAX_NOTICE_FILE_BYTES}-byte cap MAX_NOTICE_FILE_BYTES (docs/limits.md)`);
  });

  it('`register compile` prints the one line and no stack trace', () => {
    const d = fresh();
    writeHandRelease(d.releases, STAMP, tables(), { raw: { 'private/notices/acme.json': `{"provider":"acme",${SECRET}` } });
    const run = spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/register.mjs', import.meta.url)), 'compile', '--releases', d.releases, '--out', d.dist], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('[compile] private/notices/acme.json: not valid JSON (at character 20)\n');
  });
});

describe('two notice files for one provider', () => {
  it('are refused, naming both', async () => {
    const d = fresh();
    writeHandRelease(d.releases, STAMP, tables(), { notices: { acme: batch(), other: batch() } });
    expect(await refused(d)).toBe('[compile] private/notices/other.json: $.provider is also the provider of private/notices/acme.json: one notice file per provider');

    // The same provider under two spellings of its file name.
    const e = fresh();
    writeHandRelease(e.releases, STAMP, tables(), { notices: { acme: batch(), 'a%63me': batch() } });
    expect(await refused(e)).toBe('[compile] private/notices/acme.json: $.provider is also the provider of private/notices/a%63me.json: one notice file per provider');
  });

  it('a provider whose key cannot be a file name is named percent-encoded, and its batch is kept as given', async () => {
    const d = fresh();
    writeHandRelease(d.releases, STAMP, tables(), { notices: { 'a%2Fb': batch('a/b') } });
    await compileAll({ ...d, progress: false });
    const kept = JSON.parse(readFileSync(join(d.dist, STAMP, 'private', 'notices', 'a%2Fb.json'), 'utf8'));
    expect(kept.findings.map((f: { finding_id: string }) => f.finding_id)).toEqual([`${SECRET}-1`, `${SECRET}-2`]);
    expect(kept.provider).toBe('a/b');
  });
});
