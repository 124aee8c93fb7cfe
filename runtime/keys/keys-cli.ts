// `register keys add|list|revoke`: a thin shell over key-file.ts, on the keys file or (--state URL) on the key table
// of a state store that several instances share.

import { parseArgs } from 'node:util';
import { RegisterError } from '../../common/errors.ts';
import { DEFAULT_KEYS_FILE, addKey, fileRepository, listKeys, revokeKey, type KeyListing, type KeyRepository } from './key-file.ts';

const USAGE = `usage:
  register keys add --name NAME [--quota 1000] [--rate 2] [--provider SLUG] [--expires DATE] [--keys keys.json | --state URL]
  register keys list [--keys keys.json | --state URL]
  register keys revoke ID [--keys keys.json | --state URL]
--state keeps the keys in that state store (sqlite:PATH or redis://host:port/db), shared by every instance using it.`;

/** Where the command writes; the process streams unless a test captures them. */
export interface KeysCommandIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: KeysCommandIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/** Runs `register keys <argv>`. `add` prints the new key alone on the last line of stdout, so scripts can take it. */
export async function keysCommand(argv: string[], io: KeysCommandIo = processIo): Promise<void> {
  const [sub, ...rest] = argv;
  const where = { keys: { type: 'string' }, state: { type: 'string' } } as const;
  switch (sub) {
    case 'add': {
      const v = parse(rest, { ...where, name: { type: 'string' }, quota: { type: 'string' }, rate: { type: 'string' }, provider: { type: 'string' }, expires: { type: 'string' } }, 0);
      if (v.values.name === undefined) throw usage('keys add needs --name NAME');
      const quota = integer('--quota', v.values.quota);
      const rate = integer('--rate', v.values.rate);
      await withRepository(v.values, async (repository) => {
        const { record, key } = await addKey({
          repository,
          name: v.values.name as string,
          quota,
          rate,
          provider: v.values.provider as string | undefined,
          expires: v.values.expires as string | undefined,
        });
        io.err(
          `[keys] added key ${record.id} "${record.name}" to ${repository.label}: ${record.quota} lookups/month, ${record.rate}/s` +
            `${record.provider ? `, provider ${record.provider}` : ''}${record.expires_at ? `, expires ${record.expires_at}` : ''}.` +
            ` The key is shown once, below; only its hash is stored.\n`,
        );
        io.out(key + '\n');
      });
      return;
    }
    case 'list': {
      const v = parse(rest, where, 0);
      await withRepository(v.values, async (repository) => io.out(table(await listKeys({ repository }))));
      return;
    }
    case 'revoke': {
      const v = parse(rest, where, 1);
      await withRepository(v.values, async (repository) => {
        const record = await revokeKey(v.positionals[0], { repository });
        io.out(`revoked ${record.id} "${record.name}" in ${repository.label}\n`);
      });
      return;
    }
    default:
      throw usage(sub ? `unknown keys command: ${sub}` : 'missing keys command');
  }
}

/** Runs `fn` on the keys file, or on the key table of the state store `--state` names (opened and closed around it). */
async function withRepository(values: Record<string, unknown>, fn: (repository: KeyRepository) => Promise<void>): Promise<void> {
  const state = values.state as string | undefined;
  if (state === undefined) return fn(fileRepository((values.keys as string | undefined) ?? DEFAULT_KEYS_FILE));
  if (values.keys !== undefined) throw usage('give --keys FILE or --state URL, not both');
  // Loaded only here: a keys-file command never loads the engines' clients.
  const { openStateStore, describeStateLocation } = await import('../state/open-state-store.ts');
  const { keyRepositoryFor } = await import('./state-key-repository.ts');
  const opened = await openStateStore(state, { log: (m) => process.stderr.write(`${m}\n`) });
  try {
    if (opened.engine && 'ready' in opened.engine) await opened.engine.ready();
    await fn(keyRepositoryFor(opened, describeStateLocation(opened.location)));
  } finally {
    await opened.store.close();
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse(args: string[], options: Options, positionals: number): ReturnType<typeof parseArgs> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
  } catch (e) {
    throw usage((e as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw usage(positionals === 0 ? `unexpected argument: ${parsed.positionals[0]}` : `expected ${positionals} argument(s), got ${parsed.positionals.length}`);
  }
  return parsed;
}

function integer(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw usage(`${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function usage(message: string): RegisterError {
  return new RegisterError('keys', `${message}\n${USAGE}`);
}

function table(keys: KeyListing[]): string {
  const head = ['ID', 'NAME', 'QUOTA', 'RATE', 'PROVIDER', 'EXPIRES', 'STATUS', 'CREATED'];
  const now = Date.now();
  const rows = keys.map((k) => [
    k.id,
    k.name,
    String(k.quota),
    String(k.rate),
    k.provider ?? '-',
    k.expires_at ?? '-',
    k.revoked ? 'revoked' : k.expires_at && Date.parse(k.expires_at) < now ? 'expired' : 'active',
    k.created_at || '-',
  ]);
  if (rows.length === 0) return 'no keys\n';
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n') + '\n';
}
