// `register serve` and `register start` (what `npm start` runs): their options (declared once, for parsing and help)
// around startRuntime.
import { defineCommand } from 'citty';
import { access, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { badValue, ioOf, trustOption } from '../cli/command-line.ts';
import { StateUnavailableError } from './interfaces.ts';
import { availableParallelism } from 'node:os';
import { isClusterWorker, runPrimary } from './cluster.ts';
import { distWarning, listeningLine, stopWithNpm, type ServedFrom } from './serve-process.ts';
import type { Runtime } from './server.ts';
import { DEFAULT_KEY_EXTENSION, type KeyExtension } from './routes/key.ts';
import { DEFAULT_CACHE_MIB, MIB } from './release/cache-budget.ts';

/** Bounds of --cache-mib: below 4 MiB the caches hold too little to be worth having; above 64 GiB is a typo. */
const MIN_CACHE_MIB = 4;
const MAX_CACHE_MIB = 65536;

/** serve's options, which start takes too. Defaults that the environment can change (PORT, HOST) are applied in run(). */
const SERVE_ARGS = {
  dist: { type: 'string', description: 'Dist folder, or the https:// URL of a host serving its public part', valueHint: 'DIR|URL', default: 'dist' },
  'private-dist': { type: 'string', description: 'Local copy of the private part (notices) when --dist is a URL (default: --dist when it is a folder)', valueHint: 'DIR' },
  keys: { type: 'string', description: "Keys file, or 'state' to read the keys from the --state store", valueHint: 'FILE|state', default: 'keys.json' },
  state: { type: 'string', description: 'State store: a folder (its register.db), sqlite:FILE, redis://host:port/db or memory:', valueHint: 'URL', default: '.state' },
  'read-only': { type: 'boolean', description: 'Refuse acknowledgements (503) but keep counting quota in the store' },
  port: { type: 'string', description: 'Port to listen on (default $PORT, else 8787; 0 picks a free one)', valueHint: 'N' },
  host: { type: 'string', description: 'Address to listen on (default $HOST, else 127.0.0.1)', valueHint: 'ADDR' },
  workers: { type: 'string', description: "Serving processes sharing the store: a number from 1 to 64, or 'auto' for one per core", valueHint: 'N|auto', default: '1' },
  'cache-mib': {
    type: 'string',
    description: `Memory the caches of one serving process may hold together, in MiB, from ${MIN_CACHE_MIB} to ${MAX_CACHE_MIB} (default ${DEFAULT_CACHE_MIB}; docs/operations.md, "Memory")`,
    valueHint: 'N',
  },
  'access-log': { type: 'enum', options: ['on', 'off'] as string[], description: 'One JSON line per request on stdout', default: 'on' },
  'extend-how': { type: 'string', description: 'How the holder of an expiring key extends it, shown by GET /key (default $REGISTER_KEY_EXTEND_HOW, else a generic line)', valueHint: 'TEXT' },
  'extend-contact': { type: 'string', description: 'Whom to ask, shown by GET /key (default $REGISTER_KEY_EXTEND_CONTACT, else none)', valueHint: 'TEXT' },
  'cursor-secret-file': {
    type: 'string',
    description: 'File holding the secret that signs /matches cursors, the same on every instance (else $REGISTER_CURSOR_SECRET; without either /matches answers 503)',
    valueHint: 'FILE',
  },
  stamp: { type: 'string', description: 'Serve this compiled stamp on /api/v1 and /api/next instead of the newest (to preview it)', valueHint: 'STAMP' },
  trust: {
    type: 'string',
    description: 'Serve only releases signed by one of these public keys (.pub files or ed25519:… keys, comma-separated): 503 for a stamp unsigned, badly signed, expired or rolled back',
    valueHint: 'KEY[,KEY…]',
  },
} as const;

type ServeValues = {
  dist: string; 'private-dist'?: string; keys: string; state: string; 'read-only'?: boolean; port?: string; host?: string; workers: string; 'access-log': string;
  'cache-mib'?: string;
  'extend-how'?: string; 'extend-contact'?: string;
  'cursor-secret-file'?: string;
  stamp?: string;
  trust?: string;
};

/** The environment variable that may hold the /matches cursor secret (a flag's value would show in `ps`). */
const CURSOR_SECRET_ENV = 'REGISTER_CURSOR_SECRET';
const MIN_CURSOR_SECRET = 32;

/**
 * The secret that signs /matches cursors: from --cursor-secret-file, else $REGISTER_CURSOR_SECRET, else none. It is
 * required, never derived: a secret every instance could compute from the dist would let anyone forge cursors.
 */
async function cursorSecret(file: string | undefined): Promise<string | null> {
  let secret: string | undefined;
  let where = CURSOR_SECRET_ENV;
  if (file !== undefined) {
    where = file;
    try {
      secret = (await readFile(file, 'utf8')).trim();
    } catch (e) {
      throw new RegisterError('serve', `--cursor-secret-file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else secret = process.env[CURSOR_SECRET_ENV] || undefined;
  if (secret === undefined) return null;
  if (secret.length < MIN_CURSOR_SECRET) throw new RegisterError('serve', `${where}: the cursor secret must be at least ${MIN_CURSOR_SECRET} characters`);
  return secret;
}

/** The port from --port (a usage error when bad) or $PORT (a refusal naming the variable), else `fallback`. */
function port(flag: string | undefined, fallback: number): number {
  const raw = flag ?? (process.env.PORT || undefined); // an empty PORT is no PORT
  if (raw === undefined) return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (n >= 0 && n <= 65535) return n;
  const message = `bad port ${JSON.stringify(raw)} (a whole number from 0 to 65535)`;
  throw flag !== undefined ? badValue('serve', `--port: ${message}`) : new RegisterError('serve', `PORT: ${message}`);
}

/** GET /key's `extend` from the flags, else the environment, else the default line (an empty value counts as unset). */
function keyExtension(values: ServeValues): KeyExtension | undefined {
  const how = values['extend-how'] || process.env.REGISTER_KEY_EXTEND_HOW || undefined;
  const contact = values['extend-contact'] || process.env.REGISTER_KEY_EXTEND_CONTACT || undefined;
  if (how === undefined && contact === undefined) return undefined;
  // No contact configured: the field is left out (the published `contact` is a string, never null).
  return contact === undefined ? { how: how ?? DEFAULT_KEY_EXTENSION.how } : { how: how ?? DEFAULT_KEY_EXTENSION.how, contact };
}

/** `--cache-mib`: the caches' budget in bytes, or undefined for the default. */
function cacheBudgetBytes(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= MIN_CACHE_MIB && n <= MAX_CACHE_MIB)) throw badValue('serve', `bad --cache-mib ${JSON.stringify(raw)} (a whole number from ${MIN_CACHE_MIB} to ${MAX_CACHE_MIB})`);
  return n * MIB;
}

/** `--workers`: a count, or `auto` for one per core. */
function workerCount(raw: string): number {
  if (raw === 'auto') return availableParallelism();
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 64)) throw badValue('serve', `bad --workers ${JSON.stringify(raw)} (a whole number from 1 to 64, or auto)`);
  return n;
}

/** Turns the start-up problems an operator fixes (an unusable or damaged state store, a bad keys file, a busy port) into one line, no stack. */
function startupError(e: unknown, listenPort: number, host: string): unknown {
  if (e instanceof StateUnavailableError || (e instanceof Error && !(e instanceof RegisterError) && e.message.startsWith('[state] '))) {
    return new RegisterError('state', e.message.replace(/^\[state\] /, ''));
  }
  if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') return new RegisterError('serve', `port ${listenPort} on ${host} is already in use`);
  return e;
}

/** Where a person looks: the explorer and the rendered API reference. */
const pagesLine = (url: string) => `[serve] explorer at ${url}/, API reference at ${url}/docs`;

/** The signals that stop a server gracefully: a supervisor's, Ctrl-C, and a closed terminal's. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Serves until SIGTERM, SIGINT or SIGHUP; resolves with the base URL once listening. PORT and HOST fill in what the flags leave out. */
async function run(values: ServeValues, defaultPort: number): Promise<string> {
  const dist = values.dist;
  const host = values.host ?? process.env.HOST ?? '127.0.0.1';
  const workers = workerCount(values.workers);
  const cacheBudget = cacheBudgetBytes(values['cache-mib']);
  const listenPort = port(values.port, defaultPort);
  const state = values.state;
  const withAccessLog = values['access-log'] === 'on';
  const log = (line: string) => void process.stderr.write(`${line}\n`);
  const secret = await cursorSecret(values['cursor-secret-file']);
  const trust = await trustOption('serve', values.trust);
  if (trust && !isClusterWorker()) log(`[serve] serving only releases signed by ${[...trust.keys()].join(', ')}`);
  if (secret === null && !isClusterWorker()) log(`[serve] /matches answers 503 until a cursor secret is set (${CURSOR_SECRET_ENV} or --cursor-secret-file)`);
  const from: ServedFrom = { dist, state, keys: values.keys, stamp: values.stamp, workers };
  // Not awaited: a URL that does not answer must not hold the start (the server serves anyway, see distWarning).
  if (!isClusterWorker()) void distWarning(dist).then((warning) => warning && log(warning), () => {});
  if (workers > 1 && !isClusterWorker()) {
    // The primary: checks the state store, then forks the workers (this same command), which serve HTTP.
    return await new Promise<string>((resolve, reject) => {
      runPrimary({
        workers,
        state,
        log,
        onListening: (boundPort) => {
          const url = `http://${host}:${boundPort}`;
          log(listeningLine(url, from));
          log(pagesLine(url));
          resolve(url);
        },
      }).catch((e) => reject(startupError(e, listenPort, host)));
    });
  }
  // Loaded here, not at the top: a `--workers` primary never serves, and skipping the runtime's modules (routes,
  // the OpenAPI document, the compiler for `start`) is most of its start-up, so workers fork sooner.
  const { startRuntime, isUrl, ADMIN_TOKEN_ENV } = await import('./server.ts');
  // Without the access log, failure lines go to stderr with the start-up lines, and pino is never loaded.
  const logger = withAccessLog ? (await import('./ops/logger.ts')).createLogger() : null;
  let rt: Runtime;
  try {
    rt = await startRuntime({
      dist,
      privateDist: values['private-dist'] ?? (isUrl(dist) ? null : dist),
      keys: values.keys,
      state,
      readOnly: values['read-only'] === true,
      // The primary checked the database before forking; a replaced worker need not check it again.
      checkState: !isClusterWorker(),
      logger,
      log,
      port: listenPort,
      host,
      cacheBudgetBytes: cacheBudget,
      keyExtension: keyExtension(values),
      cursorSecret: secret,
      // The admin routes (/_admin/keys) open only to this token; without it they answer 503 admin_disabled.
      adminToken: process.env[ADMIN_TOKEN_ENV] || null,
      stamp: values.stamp,
      trust: trust ?? undefined,
    });
  } catch (e) {
    throw startupError(e, listenPort, host);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!isClusterWorker()) log(`[serve] ${signal}: finishing in-flight requests`);
    await rt.close();
    process.exit(0);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => void stop(signal));
  if (isClusterWorker()) {
    // Without the primary no connection reaches this worker any more: finish what is in flight and go.
    process.once('disconnect', () => void stop('primary gone'));
  } else {
    log(listeningLine(rt.url, from));
    log(pagesLine(rt.url));
  }
  return rt.url;
}

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'Serve the API (and /healthz, /readyz, /metrics); picks up newly compiled releases and key changes without a restart' },
  args: SERVE_ARGS,
  async run(ctx) {
    if (!isClusterWorker()) stopWithNpm((line) => void process.stderr.write(`${line}\n`));
    await run(ctx.args, 8787);
  },
});

export const startCommand = defineCommand({
  meta: { name: 'start', description: 'What `npm start` runs: compile releases/ if needed, create a development key on first run, then serve' },
  args: SERVE_ARGS,
  async run(ctx) {
    const values = ctx.args;
    // A development server signs /matches cursors with a random secret kept beside the keys, made once.
    const secretFile = values['cursor-secret-file'] ?? (process.env[CURSOR_SECRET_ENV] ? undefined : join(dirname(values.keys), '.cursor-secret'));
    // A forked worker only serves: the primary compiled and made the key and the secret before it forked.
    if (isClusterWorker()) return void (await run({ ...values, 'cursor-secret-file': secretFile }, 8787));
    const err = ioOf(ctx).err;
    // From the start: a SIGTERM to `npm start` during the compile must stop it too.
    stopWithNpm((line) => err(`${line}\n`));
    const { compileAll } = await import('../compiler/compile.ts');
    const { addKey } = await import('./keys/key-file.ts');
    const { writeCompileReport } = await import('../compiler/compile-report.ts');
    await compileAll({
      releases: 'releases', dist: values.dist,
      onCompiled: (r) => err(`[compile] ${r.stamp}: ${r.counts.entities} entities; report ${writeCompileReport(values.dist, r)}\n`),
      onWarning: (line) => err(`[compile] warning: ${line}\n`),
    });
    const keys = values.keys;
    let devKey: string | null = null;
    try {
      await access(keys);
    } catch {
      devKey = (await addKey({ file: keys, name: 'local development', quota: 100000, rate: 50, provider: undefined })).key;
    }
    if (secretFile !== undefined && values['cursor-secret-file'] === undefined) {
      try {
        await access(secretFile);
      } catch {
        await writeFile(secretFile, randomBytes(32).toString('hex'), { mode: 0o600 });
      }
    }
    const url = await run({ ...values, 'cursor-secret-file': secretFile }, 8787);
    if (devKey) {
      err(`[start] created a development key (shown once; stored hashed in ${keys}):\n${devKey}\n`);
      err(`[start] try: curl -H 'Authorization: Bearer ${devKey}' '${url}/api/v1/search?q=arsenal'\n`);
    } else {
      err(`[start] using existing keys in ${keys} (add one: npx register keys add --name NAME)\n`);
    }
  },
});
