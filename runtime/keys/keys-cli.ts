// `register keys add|list|revoke`: a thin shell over key-file.ts, on the keys file (--keys FILE, the default) or
// (--state URL) on the key table of a state store that several instances share.

import { defineCommand, type ArgsDef, type CommandDef } from 'citty';
import { RegisterError } from '../../common/errors.ts';
import type { RedisStateStore } from '../state/redis-store.ts';
import { badValue, ioOf, processIo, runCommandLine, type CommandIo } from '../../cli/command-line.ts';
import { StateUnavailableError, type KeyRepository } from '../interfaces.ts';
import { DEFAULT_KEYS_FILE, fileKeyRepository } from './file-key-repository.ts';
import { KEY_ID, PROVIDER_SLUG } from './key-entry.ts';
import { DEFAULT_QUOTA, DEFAULT_RATE, addKey, listKeys, revokeKey, type KeyListing } from './key-file.ts';

/** Where the command writes; the process streams unless a test captures them. */
export type KeysCommandIo = CommandIo;

/** Where every keys command reads and writes: the keys file, or the key table of a shared state store. */
const WHERE = {
  keys: { type: 'string', description: `Keys file (default ${DEFAULT_KEYS_FILE})`, valueHint: 'FILE' },
  state: { type: 'string', description: 'Keep the keys in this state store instead (sqlite:PATH or redis://host:port/db), shared by every instance using it', valueHint: 'URL' },
  edge: { type: 'string', description: 'Manage the keys of this edge deployment instead, through its admin route (token from REGISTER_EDGE_ADMIN_TOKEN)', valueHint: 'URL' },
} as const;

const add = defineCommand({
  meta: { name: 'add', description: 'Issue a key: printed once, alone on the last line of stdout; only its hash is stored' },
  args: {
    name: { type: 'string', description: 'Who the key is for', valueHint: 'NAME', required: true },
    quota: { type: 'string', description: 'Lookups a month', valueHint: 'N', default: String(DEFAULT_QUOTA) },
    rate: { type: 'string', description: 'Requests a second', valueHint: 'N', default: String(DEFAULT_RATE) },
    provider: { type: 'string', description: 'Provider slug whose notices the key may read and acknowledge', valueHint: 'SLUG' },
    expires: { type: 'string', description: 'Expiry: an ISO date (the end of that day, UTC) or date-time', valueHint: 'DATE' },
    plan: { type: 'string', description: 'Plan name GET /key reports (e.g. preview)', valueHint: 'NAME' },
    organisation: { type: 'string', description: 'Organisation the key is issued to, reported by GET /key', valueHint: 'TEXT' },
    'access-model': { type: 'string', description: 'How the key was granted, reported by GET /key (e.g. partner_preview)', valueHint: 'NAME' },
    ...WHERE,
  },
  async run(ctx) {
    const a = ctx.args;
    const io = ioOf(ctx);
    const quota = whole('--quota', a.quota, 0);
    const rate = whole('--rate', a.rate, 1);
    if (a.provider !== undefined && !PROVIDER_SLUG.test(a.provider)) {
      throw badValue('keys', `--provider must be a provider slug (lowercase letters, digits, _ and -), got ${JSON.stringify(a.provider)}`);
    }
    if (a.expires !== undefined && !(/^\d{4}-\d{2}-\d{2}/.test(a.expires) && !Number.isNaN(Date.parse(a.expires)))) {
      throw badValue('keys', `--expires must be an ISO date (2027-06-30) or date-time, got ${JSON.stringify(a.expires)}`);
    }
    await withRepository(a, async (repository) => {
      const { record, key } = await addKey({
        repository, name: a.name, quota, rate, provider: a.provider, expires: a.expires, plan: a.plan, organisation: a.organisation, accessModel: a['access-model'],
      });
      io.err(
        `[keys] added key ${record.id} "${record.name}" to ${repository.label}: ${record.quota} lookups/month, ${record.rate}/s` +
          `${record.plan ? `, plan ${record.plan}` : ''}${record.organisation ? `, organisation "${record.organisation}"` : ''}` +
          `${record.access_model ? `, access model ${record.access_model}` : ''}` +
          `${record.provider ? `, provider ${record.provider}` : ''}${record.expires_at ? `, expires ${record.expires_at}` : ''}.` +
          ` The key is shown once, below; only its hash is stored.\n`,
      );
      io.out(key + '\n');
    });
  },
});

const list = defineCommand({
  meta: { name: 'list', description: 'List the keys (never their hashes)' },
  args: WHERE,
  async run(ctx) {
    await withRepository(ctx.args, async (repository) => ioOf(ctx).out(table(await listKeys({ repository }))));
  },
});

const revoke = defineCommand({
  meta: { name: 'revoke', description: 'Revoke a key: every running server refuses it within a second' },
  args: {
    id: { type: 'positional', description: 'The key id: the 8 hex digits after rk_', valueHint: 'ID', required: true },
    ...WHERE,
  },
  async run(ctx) {
    const id = ctx.args.id;
    if (!KEY_ID.test(id)) throw badValue('keys', `not a key id (8 hex digits): ${JSON.stringify(id)}`);
    await withRepository(ctx.args, async (repository) => {
      const record = await revokeKey(id, { repository });
      ioOf(ctx).out(`revoked ${record.id} "${record.name}" in ${repository.label}\n`);
    });
  },
});

export const keysCommandDef = defineCommand({
  meta: { name: 'keys', description: 'Issue, list and revoke API keys, in the keys file or a shared state store' },
  subCommands: { add, list, revoke },
}) as CommandDef<ArgsDef>;

/** Runs `register keys <argv>`. `add` prints the new key alone on the last line of stdout, so scripts can take it. */
export async function keysCommand(argv: string[], io: KeysCommandIo = processIo): Promise<void> {
  await runCommandLine(keysCommandDef, argv, ['register', 'keys'], io);
}

/** Runs `fn` on the keys file, the key table of the state store `--state` names (opened and closed around it), or an edge deployment's keys (`--edge`). */
async function withRepository(values: Record<string, unknown>, fn: (repository: KeyRepository) => Promise<void>): Promise<void> {
  const state = values.state as string | undefined;
  const edge = values.edge as string | undefined;
  if (edge !== undefined) {
    if (values.keys !== undefined || state !== undefined) throw badValue('keys', 'give one of --keys FILE, --state URL or --edge URL');
    const token = process.env.REGISTER_EDGE_ADMIN_TOKEN;
    if (!token) throw badValue('keys', '--edge needs the admin token in REGISTER_EDGE_ADMIN_TOKEN');
    const { edgeKeyRepository } = await import('./edge-key-repository.ts');
    return fn(edgeKeyRepository(edge, token));
  }
  if (state === undefined) return fn(fileKeyRepository((values.keys as string | undefined) ?? DEFAULT_KEYS_FILE));
  if (values.keys !== undefined) throw badValue('keys', 'give --keys FILE or --state URL, not both');
  // Loaded only here: a keys-file command never loads the engines' clients.
  const { openStateStore, describeStateLocation } = await import('../state/open-state-store.ts');
  const { keyRepositoryFor } = await import('./state-key-repository.ts');
  // The store's own lines speak to a server ("serving anyway; costing requests answer 503"); until the store is
  // reached they are held, and a command that cannot reach it says so in one line naming it (never its password).
  let held: string[] | null = [];
  const log = (m: string): void => void (held ? held.push(m) : process.stderr.write(`${m}\n`));
  const opened = await openStateStore(state, { log }).catch((e: unknown) => {
    throw stateRefusal(e);
  });
  try {
    if (opened.engine?.kind === 'redis') await reached(opened.engine.redis);
    for (const m of held) process.stderr.write(`${m}\n`);
    held = null;
    await fn(keyRepositoryFor(opened, describeStateLocation(opened.location)));
  } catch (e) {
    throw stateRefusal(e);
  } finally {
    await opened.store.close();
  }
}

/**
 * Resolves once the Redis under a keys command answers. One that may be restarting gets ready()'s bound; one that
 * refuses the credentials will not change its mind, so that fails at the next attempt (they come every ≤ 0.5 s).
 */
async function reached(engine: RedisStateStore): Promise<void> {
  let onError: (e: Error) => void = () => {};
  const refused = new Promise<never>((_, reject) => {
    onError = (e) => {
      if (/^(WRONGPASS|NOAUTH)\b/.test(e.message)) reject(new StateUnavailableError(`[state] ${engine.label}: authentication failed (${e.message})`));
    };
  });
  engine.client.on('error', onError);
  try {
    await Promise.race([engine.ready(), refused]);
  } finally {
    engine.client.off('error', onError);
  }
}

/** A store that cannot be opened or reached (`[state] …` errors) as the one-line refusal the CLI prints, exit 1. */
function stateRefusal(e: unknown): unknown {
  if (e instanceof RegisterError || !(e instanceof Error) || !(e instanceof StateUnavailableError || e.message.startsWith('[state] '))) return e;
  return new RegisterError('state', e.message.replace(/^\[state\] /, ''));
}

function whole(flag: string, value: string, min: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && Number.isSafeInteger(n))) throw badValue('keys', `${flag} must be a whole number${min > 0 ? ` from ${min} up` : ''}, got ${JSON.stringify(value)}`);
  return n;
}

function table(keys: KeyListing[]): string {
  const head = ['ID', 'NAME', 'PLAN', 'QUOTA', 'RATE', 'PROVIDER', 'EXPIRES', 'STATUS', 'CREATED'];
  const now = Date.now();
  const rows = keys.map((k) => [
    k.id,
    k.name,
    k.plan ?? '-',
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
