// `register serve` and `register start` (what `npm start` runs): argument parsing around startRuntime.
import { parseArgs } from 'node:util';
import { access } from 'node:fs/promises';
import { RegisterError } from '../common/errors.ts';
import { StateUnavailableError } from './interfaces.ts';
import { availableParallelism } from 'node:os';
import { isClusterWorker, runPrimary } from './cluster.ts';
import type { Runtime } from './server.ts';

const SERVE_OPTIONS = {
  dist: { type: 'string' },
  'private-dist': { type: 'string' },
  keys: { type: 'string' },
  state: { type: 'string' },
  'read-only': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  workers: { type: 'string' },
  'access-log': { type: 'string' },
} as const;

function port(raw: string | undefined, fallback: number): number {
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new RegisterError('serve', `bad port ${JSON.stringify(raw)}`);
  return n;
}

/** `--workers`: a count, or `auto` for one per core. Default 1: one process. */
function workerCount(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (raw === 'auto') return availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new RegisterError('serve', `bad --workers ${JSON.stringify(raw)} (a whole number from 1 to 64, or auto)`);
  return n;
}

/** `--access-log on|off` (default on): one JSON line per request on stdout. */
function accessLog(raw: string | undefined): boolean {
  if (raw === undefined || raw === 'on') return true;
  if (raw === 'off') return false;
  throw new RegisterError('serve', `bad --access-log ${JSON.stringify(raw)} (on or off)`);
}

type ServeValues = { dist?: string; 'private-dist'?: string; keys?: string; state?: string; 'read-only'?: boolean; port?: string; host?: string; workers?: string; 'access-log'?: string };

/** Turns the start-up problems an operator fixes (an unusable or damaged state store, a bad keys file, a busy port) into one line, no stack. */
function startupError(e: unknown, listenPort: number, host: string): unknown {
  if (e instanceof StateUnavailableError || (e instanceof Error && !(e instanceof RegisterError) && e.message.startsWith('[state] '))) {
    return new RegisterError('state', e.message.replace(/^\[state\] /, ''));
  }
  if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') return new RegisterError('serve', `port ${listenPort} on ${host} is already in use`);
  return e;
}

/** Serves until SIGTERM or SIGINT; resolves with the base URL once listening. PORT and HOST fill in what the flags leave out. */
async function run(values: ServeValues, defaultPort: number): Promise<string> {
  const dist = values.dist ?? 'dist';
  const host = values.host ?? process.env.HOST ?? '127.0.0.1';
  const listenPort = port(values.port ?? process.env.PORT, defaultPort);
  const workers = workerCount(values.workers);
  const state = values.state ?? '.state';
  const withAccessLog = accessLog(values['access-log']);
  const log = (line: string) => void process.stderr.write(`${line}\n`);
  if (workers > 1 && !isClusterWorker()) {
    // The primary: checks the state store, then forks the workers (this same command), which serve HTTP.
    return await new Promise<string>((resolve, reject) => {
      runPrimary({
        workers,
        state,
        log,
        onListening: (boundPort) => {
          const url = `http://${host}:${boundPort}`;
          log(`[serve] listening on ${url}/api/v1 (dist ${dist}, ${workers} worker processes)`);
          resolve(url);
        },
      }).catch((e) => reject(startupError(e, listenPort, host)));
    });
  }
  // Loaded here, not at the top: a `--workers` primary never serves, and skipping the runtime's modules (routes,
  // the OpenAPI document, the compiler for `start`) is most of its start-up, so workers fork sooner.
  const { startRuntime, isUrl } = await import('./server.ts');
  // Without the access log, failure lines go to stderr with the start-up lines, and pino is never loaded.
  const logger = withAccessLog ? (await import('./ops/logger.ts')).createLogger() : null;
  let rt: Runtime;
  try {
    rt = await startRuntime({
      dist,
      privateDist: values['private-dist'] ?? (isUrl(dist) ? null : dist),
      keys: values.keys ?? 'keys.json',
      state,
      readOnly: values['read-only'] === true,
      // The primary checked the database before forking; a replaced worker need not check it again.
      checkState: !isClusterWorker(),
      logger,
      log,
      port: listenPort,
      host,
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
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (isClusterWorker()) {
    // Without the primary no connection reaches this worker any more: finish what is in flight and go.
    process.once('disconnect', () => void stop('primary gone'));
  } else {
    log(`[serve] listening on ${rt.url}/api/v1 (dist ${dist})`);
  }
  return rt.url;
}

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: SERVE_OPTIONS, strict: true });
  await run(values, 8787);
}

/** Compiles releases/ if needed, makes a development key on first run, then serves on $PORT (default 8787). */
export async function startCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: SERVE_OPTIONS, strict: true });
  // A forked worker only serves: the primary compiled and made the key before it forked.
  if (isClusterWorker()) return void (await run(values, 8787));
  const dist = values.dist ?? 'dist';
  const { compileAll } = await import('../compiler/compile.ts');
  const { addKey } = await import('./keys/key-file.ts');
  await compileAll({ releases: 'releases', dist, onCompiled: (r) => process.stderr.write(`[compile] ${r.stamp}: ${r.counts.entities} entities\n`) });
  const keys = values.keys ?? 'keys.json';
  let devKey: string | null = null;
  try {
    await access(keys);
  } catch {
    devKey = (await addKey({ file: keys, name: 'local development', quota: 100000, rate: 50, provider: undefined })).key;
  }
  const url = await run(values, 8787);
  if (devKey) {
    process.stderr.write(`[start] created a development key (shown once; stored hashed in ${keys}):\n${devKey}\n`);
    process.stderr.write(`[start] try: curl -H 'Authorization: Bearer ${devKey}' '${url}/api/v1/search?q=arsenal'\n`);
  } else {
    process.stderr.write(`[start] using existing keys in ${keys} (add one: npx register keys add --name NAME)\n`);
  }
}
