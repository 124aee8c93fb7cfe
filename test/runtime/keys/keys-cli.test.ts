// `register keys add|list|revoke` run as functions, with stdout and stderr captured.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RegisterError } from '../../../common/errors.ts';
import { API_KEY, hashSecret } from '../../../runtime/keys/key-entry.ts';
import { openKeyStore } from '../../../runtime/keys/key-store.ts';
import { keysCommand } from '../../../runtime/keys/keys-cli.ts';
import { UsageError } from '../../../cli/command-line.ts';

const root = mkdtempSync(join(tmpdir(), 'keys-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(argv: string[]): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  await keysCommand(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { out, err };
}

describe('register keys', () => {
  it('adds, lists and revokes keys', async () => {
    const file = join(root, 'keys.json');
    const a = await run(['add', '--name', 'Acme Data', '--provider', 'acme', '--quota', '5000', '--rate', '5', '--keys', file]);
    const key = a.out.trimEnd().split('\n').at(-1)!;
    expect(a.out).toBe(key + '\n'); // the key alone on the last line
    expect(key).toMatch(API_KEY);
    const id = key.slice(3, 11);
    expect(a.err).toContain(`added key ${id} "Acme Data"`);
    expect(a.err).not.toContain(key);

    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.keys[0]).toMatchObject({ id, name: 'Acme Data', hash: hashSecret(key.slice(12)), plan: { quota: 5000, rate: 5 }, meta: { provider: 'acme' }, expires_at: null, revoked: false });
    expect(readFileSync(file, 'utf8')).not.toContain(key.slice(12));
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const b = await run(['add', '--name', 'Trial', '--expires', '2999-01-31', '--keys', file]);
    const id2 = b.out.trim().slice(3, 11);

    const list = (await run(['list', '--keys', file])).out;
    const lines = list.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+PLAN\s+QUOTA\s+RATE\s+PROVIDER\s+EXPIRES\s+STATUS\s+CREATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${id}\\s+Acme Data\\s+-\\s+5000\\s+5\\s+acme\\s+-\\s+active\\s+20`));
    expect(lines[2]).toMatch(new RegExp(`^${id2}\\s+Trial\\s+-\\s+1000\\s+2\\s+-\\s+2999-01-31T23:59:59.999Z\\s+active`));
    expect(list).not.toMatch(/[0-9a-f]{64}/);

    const r = await run(['revoke', id, '--keys', file]);
    expect(r.out).toContain(`revoked ${id}`);
    expect((await run(['list', '--keys', file])).out.split('\n')[1]).toMatch(/\brevoked\b/);
    const s = openKeyStore({ file, log: () => {} });
    expect(s.authenticate(`Bearer ${key}`, new Date())).toEqual({ ok: false, code: 'revoked_key' });
    expect(s.authenticate(`Bearer ${b.out.trim()}`, new Date()).ok).toBe(true);
    s.close();
  });

  it('stores --plan, --organisation and --access-model in the keys file, and refuses malformed ones naming the flag', async () => {
    const file = join(root, 'plans.json');
    const a = await run(['add', '--name', 'Org', '--plan', 'preview', '--organisation', 'Acme Analytics Ltd', '--access-model', 'partner_preview', '--keys', file]);
    const key = a.out.trim();
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.keys[0]).toMatchObject({ plan: { quota: 1000, rate: 2, name: 'preview' }, meta: { organisation: 'Acme Analytics Ltd', access_model: 'partner_preview' } });
    const s = openKeyStore({ file, log: () => {} });
    expect(s.authenticate(`Bearer ${key}`, new Date())).toMatchObject({ ok: true, key: { plan: 'preview', organisation: 'Acme Analytics Ltd', access_model: 'partner_preview' } });
    s.close();
    // A key issued without them keeps the entry as before: no name in plan, nothing new in meta.
    await run(['add', '--name', 'Plain', '--keys', file]);
    const plain = JSON.parse(readFileSync(file, 'utf8')).keys[1];
    expect(plain.plan).toEqual({ quota: 1000, rate: 2 });
    expect(plain.meta).toEqual({});
    await expect(run(['add', '--name', 'x', '--plan', 'Not A Word', '--keys', file])).rejects.toThrow(/--plan must be a short lowercase word/);
    await expect(run(['add', '--name', 'x', '--access-model', 'a b', '--keys', file])).rejects.toThrow(/--access-model must be a short lowercase word/);
    await expect(run(['add', '--name', 'x', '--organisation', 'a\u0007b', '--keys', file])).rejects.toThrow(/--organisation must be at most 200 characters/);
  });

  it('prints "no keys" for an empty or missing file', async () => {
    expect((await run(['list', '--keys', join(root, 'none.json')])).out).toBe('no keys\n');
  });

  it('refuses a bad command line with a UsageError, and what only the keys say with a RegisterError', async () => {
    const file = join(root, 'bad.json');
    const usage: [string[], RegExp][] = [
      [[], /missing command \(one of add, list, revoke\)/],
      [['remove'], /unknown command 'remove'/],
      [['add', '--keys', file], /--name NAME is required/],
      [['add', '--name', 'x', '--quota', '-5', '--keys', file], /--quota/],
      [['add', '--name', 'x', '--quota', 'lots', '--keys', file], /--quota must be a whole number, got "lots"/],
      [['add', '--name', 'x', '--rate', '0', '--keys', file], /--rate must be a whole number from 1 up, got "0"/],
      [['add', '--name', 'x', '--provider', 'Not A Slug', '--keys', file], /--provider must be a provider slug/],
      [['add', '--name', 'x', '--expires', 'soon', '--keys', file], /--expires must be an ISO date/],
      [['add', '--name', 'x', '--colour', 'red', '--keys', file], /Unknown option '--colour'/],
      [['add', 'stray', '--name', 'x', '--keys', file], /unexpected argument 'stray'/],
      [['revoke', '--keys', file], /expected 1 argument\(s\) \(ID\), got 0/],
      [['revoke', 'a', 'b', '--keys', file], /expected 1 argument\(s\), got 2/],
      [['revoke', 'zz', '--keys', file], /not a key id/],
      [['list', '--state', 'memory:', '--keys', 'k.json'], /not both/],
    ];
    const refused: [string[], RegExp][] = [
      [['add', '--name', 'x', '--expires', '2001-01-01', '--keys', file], /already past/],
      [['revoke', '0badf00d', '--keys', file], /no key with id 0badf00d/],
    ];
    for (const [cases, usageError] of [[usage, true], [refused, false]] as const) {
      for (const [argv, message] of cases) {
        const e = await run(argv).catch((x: unknown) => x);
        expect(e, argv.join(' ')).toBeInstanceOf(RegisterError);
        expect(e instanceof UsageError, argv.join(' ')).toBe(usageError);
        expect((e as Error).message, argv.join(' ')).toMatch(message);
        expect((e as Error).message).toMatch(/^\[keys\]/);
      }
    }
  });

  it('prints each command\'s help, declared with its options, to stdout', async () => {
    const help = await run(['add', '--help']);
    expect(help.err).toBe('');
    expect(help.out).toMatch(/USAGE register keys add \[OPTIONS\] --name=<NAME>/);
    for (const flag of ['--name', '--quota', '--rate', '--provider', '--expires', '--keys', '--state']) expect(help.out).toContain(flag);
    expect((await run(['--help'])).out).toMatch(/add\s+Issue a key[^]*list\s+List the keys[^]*revoke\s+Revoke a key/);
  });

  it('writes to process stdout when no io is given', async () => {
    const file = join(root, 'stdout.json');
    const chunks: string[] = [];
    const write = process.stdout.write;
    const errWrite = process.stderr.write;
    process.stdout.write = ((c: string) => (chunks.push(String(c)), true)) as typeof process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      await keysCommand(['add', '--name', 'Std', '--keys', file]);
    } finally {
      process.stdout.write = write;
      process.stderr.write = errWrite;
    }
    expect(chunks.join('')).toMatch(/^rk_[0-9a-f]{8}_[A-Za-z0-9_-]{32}\n$/);
  });
});
