// `register serve` and `register start` (what `npm start` runs): argument parsing around startRuntime.
import { parseArgs } from 'node:util';
import { access } from 'node:fs/promises';
import { RegisterError } from '../common/errors.ts';
import { compileAll } from '../compiler/compile.ts';
import { addKey } from './keys/key-file.ts';
import { StateUnavailableError } from './interfaces.ts';
import { startRuntime, isUrl, type Runtime } from './server.ts';
import { StateDirLockedError } from './state/journal-store.ts';

const SERVE_OPTIONS = {
  dist: { type: 'string' },
  'private-dist': { type: 'string' },
  keys: { type: 'string' },
  state: { type: 'string' },
  'read-only': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
} as const;

function port(raw: string | undefined, fallback: number): number {
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new RegisterError('serve', `bad port ${JSON.stringify(raw)}`);
  return n;
}

async function run(values: { dist?: string; 'private-dist'?: string; keys?: string; state?: string; 'read-only'?: boolean; port?: string; host?: string }, defaultPort: number) {
  const dist = values.dist ?? 'dist';
  const host = values.host ?? '127.0.0.1';
  const listenPort = port(values.port, defaultPort);
  let rt: Runtime;
  try {
    rt = await startRuntime({
      dist,
      privateDist: values['private-dist'] ?? (isUrl(dist) ? null : dist),
      keys: values.keys ?? 'keys.json',
      state: values['read-only'] ? null : (values.state ?? '.state'),
      port: listenPort,
      host,
    });
  } catch (e) {
    // Start-up problems an operator fixes (a locked or unwritable state directory, a busy port): one line, no stack.
    if (e instanceof StateDirLockedError || e instanceof StateUnavailableError) throw new RegisterError('state', e.message.replace(/^\[state\] /, ''));
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new RegisterError('serve', `port ${listenPort} on ${host} is already in use`);
    throw e;
  }
  process.stderr.write(`[serve] listening on ${rt.url}/api/v1 (dist ${dist})\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`[serve] ${signal}: finishing in-flight requests\n`);
    await rt.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return rt;
}

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: SERVE_OPTIONS, strict: true });
  await run(values, 8787);
}

/** Compiles releases/ if needed, makes a development key on first run, then serves on $PORT (default 8787). */
export async function startCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: SERVE_OPTIONS, strict: true });
  const dist = values.dist ?? 'dist';
  await compileAll({ releases: 'releases', dist, onCompiled: (r) => process.stderr.write(`[compile] ${r.stamp}: ${r.counts.entities} entities\n`) });
  const keys = values.keys ?? 'keys.json';
  let devKey: string | null = null;
  try {
    await access(keys);
  } catch {
    devKey = (await addKey({ file: keys, name: 'local development', quota: 100000, rate: 50, provider: undefined })).key;
  }
  const rt = await run({ ...values, port: values.port ?? process.env.PORT }, 8787);
  if (devKey) {
    process.stderr.write(`[start] created a development key (shown once; stored hashed in ${keys}):\n${devKey}\n`);
    process.stderr.write(`[start] try: curl -H 'Authorization: Bearer ${devKey}' '${rt.url}/api/v1/search?q=arsenal'\n`);
  } else {
    process.stderr.write(`[start] using existing keys in ${keys} (add one: npx register keys add --name NAME)\n`);
  }
}
