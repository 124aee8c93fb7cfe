// The `register` command: a thin shell over the compiler and runtime functions (one per subcommand).
import { RegisterError } from '../common/errors.ts';

const USAGE = `usage: register <command> [options]

  generate --out releases/<stamp> [--entities N] [--seed S] [--prior releases/<older>]
  import-v0 [--from ../shared/real-data/v0-register] --out releases/<stamp>
  compile [--releases releases] [--out dist] [--stamp S] [--strict]
  verify [--dist dist]
  serve [--dist dist|https://mirror/dist] [--keys keys.json] [--state .state] [--read-only] [--port 8787] [--host 127.0.0.1] [--workers 1|N|auto]
  start                      compile releases/ if needed, create a dev key on first run, serve on $PORT
  keys add --name NAME [--quota 1000] [--rate 2] [--provider SLUG] [--expires DATE] [--keys keys.json]
  keys list [--keys keys.json]
  keys revoke ID [--keys keys.json]`;

const commands: Record<string, () => Promise<(argv: string[]) => Promise<unknown>>> = {
  generate: async () => (await import('../generator/cli.ts')).generateCommand,
  'import-v0': async () => (await import('../generator/cli.ts')).importV0Command,
  compile: async () => (await import('../compiler/cli.ts')).compileCommand,
  verify: async () => (await import('../compiler/cli.ts')).verifyCommand,
  serve: async () => (await import('../runtime/cli.ts')).serveCommand,
  start: async () => (await import('../runtime/cli.ts')).startCommand,
  keys: async () => (await import('../runtime/keys/keys-cli.ts')).keysCommand,
};

const [name, ...argv] = process.argv.slice(2);
const asksHelp = (a: string | undefined) => a === '--help' || a === '-h';
if (!name || asksHelp(name) || !commands[name]) {
  process.stderr.write(USAGE + '\n');
  process.exit(name && !asksHelp(name) ? 2 : 0);
}
if (argv.some(asksHelp)) {
  process.stderr.write(USAGE + '\n');
  process.exit(0);
}
try {
  await (await commands[name]())(argv);
} catch (e) {
  if (e instanceof RegisterError) {
    process.stderr.write(e.message + '\n');
    process.exit(1);
  }
  // node:util parseArgs refuses an unknown or malformed option with a coded TypeError: a usage mistake, not a crash.
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    process.stderr.write(`register ${name}: ${(e as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  throw e;
}
