// Runs a citty command tree the way `register` promises: help on stdout, strict options (an unknown option, a
// missing value or a stray argument is a usage error, exit 2), and the one error type for everything else (exit 1).
// citty supplies the declarations and the help; each command line is parsed once, here, strictly.
import { renderUsage, type ArgDef, type ArgsDef, type CommandContext, type CommandDef, type ParsedArgs } from 'citty';
import { parseArgs, stripVTControlCharacters, type ParseArgsConfig } from 'node:util';
import { RegisterError } from '../common/errors.ts';
import { endProgressLines } from '../common/progress.ts';
import { readTrust, splitTrust } from '../common/signing-files.ts';
import type { TrustedKeys } from '../common/signing.ts';

/** A command line that cannot be right whatever the files say: an unknown option, a missing or bad value. Exit 2. */
export class UsageError extends RegisterError {
  /** The command's words (`register keys add`), so the message can point at its help. */
  command = '';
}

/** Where a command writes; the process's streams unless a test captures them. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CommandIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/** What every command's run() gets as citty's `data`. */
export interface RunData {
  io: CommandIo;
}

/** The io a command was given (citty hands `data` through untyped). */
export const ioOf = (ctx: Pick<CommandContext, 'data'>): CommandIo => (ctx.data as RunData | undefined)?.io ?? processIo;

/** What runCommandLine did: ran a command (its result), or printed help or the version. */
export type Outcome = { ran: true; result: unknown } | { ran: false };

const HELP = new Set(['--help', '-h']);

/**
 * Runs `argv` against `root` (named `words`, e.g. `['register']`). Help (`--help`/`-h` anywhere) and, at the root,
 * `--version` print to io.out and run nothing. Throws UsageError for a command line that cannot be right, and
 * whatever the command throws.
 */
export async function runCommandLine(root: CommandDef<ArgsDef>, argv: string[], words: string[], io: CommandIo = processIo): Promise<Outcome> {
  let cmd = root;
  let rest = argv;
  const path = [...words];
  let parent: CommandDef<ArgsDef> | undefined;
  for (;;) {
    const subs = await resolve(cmd.subCommands);
    if (!subs) break;
    const [name, ...after] = rest;
    if (name === undefined || name.startsWith('-')) {
      if (rest.some((a) => HELP.has(a)) || (path.length === 1 && name === undefined)) {
        io.out(await usageOf(cmd, parent, path));
        return { ran: false };
      }
      if (path.length === 1 && (name === '--version' || name === '-v') && after.length === 0) {
        io.out(`${(await resolve(root.meta))?.version ?? 'unknown'}\n`);
        return { ran: false };
      }
      throw usage(path, name === undefined ? `missing command (one of ${Object.keys(subs).join(', ')})` : `unknown option '${name}' before the command`);
    }
    const sub = subs[name];
    if (!sub) throw usage(path, `unknown command '${name}' (one of ${Object.keys(subs).join(', ')})`);
    parent = cmd;
    cmd = (await resolve(sub))!;
    path.push(name);
    rest = after;
  }
  if (rest.some((a) => HELP.has(a))) {
    io.out(await usageOf(cmd, parent, path));
    return { ran: false };
  }
  const args = parseStrictly((await resolve(cmd.args)) ?? {}, rest, path);
  // citty's runCommand would parse `rest` again, leniently; run() gets the one strict parse instead. Without
  // citty's setup, cleanup and plugins, run() is the whole of what runCommand would do, so none may be declared.
  if (cmd.setup || cmd.cleanup || cmd.plugins) throw new Error(`${path.join(' ')}: declare run() only (setup, cleanup and plugins are not run)`);
  const data: RunData = { io };
  return { ran: true, result: await cmd.run?.({ rawArgs: rest, args: args as ParsedArgs<ArgsDef>, data, cmd }) };
}

/** The help of one command, from its citty declaration; plain text unless stdout is a colour terminal. */
async function usageOf(cmd: CommandDef<ArgsDef>, parent: CommandDef<ArgsDef> | undefined, path: string[]): Promise<string> {
  // citty names a command by its parent's name and its own; the parent stands in for the whole path.
  const named: CommandDef<ArgsDef> = { meta: { ...(await resolve(parent?.meta)), name: path.slice(0, -1).join(' ') } };
  const text = await renderUsage(cmd, path.length > 1 ? named : undefined);
  const colour = process.stdout.isTTY && !process.env.NO_COLOR;
  // citty pads every column, the last one too: no trailing blanks on a line.
  return (colour ? text : stripVTControlCharacters(text)).split('\n').map((l) => l.trimEnd()).join('\n') + '\n';
}

/**
 * The one parse of a command's options: Node's strict parser over the command's citty declaration (citty's own
 * parser turns an unknown option into one more value), then what citty adds on top: named positionals, defaults,
 * required options and enum values. Returns the values run() reads as `ctx.args`.
 */
function parseStrictly(args: ArgsDef, rest: string[], path: string[]): Record<string, unknown> {
  // Every value is collected so an option given twice is refused rather than silently reduced to its last value
  // (`--trust A --trust B` would drop A; a list is given once, comma-separated).
  const options: NonNullable<ParseArgsConfig['options']> = {};
  const positionals: [string, ArgDef][] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') positionals.push([name, def]);
    else {
      const fallback = def.default === undefined ? {} : { default: [def.default] as string[] | boolean[] };
      options[name] = { type: def.type === 'boolean' ? 'boolean' : 'string', multiple: true, ...fallback };
    }
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (e) {
    // node's wording, without its advice on `--` (no command here takes a value that starts with a dash).
    throw usage(path, (e as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const given = parsed.positionals;
  const required = positionals.filter(([, d]) => d.required !== false && d.default === undefined).length;
  if (given.length > positionals.length) {
    throw usage(path, positionals.length === 0 ? `unexpected argument '${given[0]}'` : `expected ${positionals.length} argument(s), got ${given.length}`);
  }
  if (given.length < required) {
    throw usage(path, `expected ${required} argument(s) (${positionals.map(([n]) => n.toUpperCase()).join(' ')}), got ${given.length}`);
  }
  const values: Record<string, unknown> = { _: given };
  positionals.forEach(([name, def], i) => (values[name] = given[i] ?? def.default));
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') continue;
    const all = parsed.values[name] as (string | boolean)[] | undefined;
    if (all && all.length > 1) throw usage(path, `--${name} is given ${all.length} times; give it once`);
    const value = (values[name] = all?.[0]);
    if (def.required && value === undefined) throw usage(path, `--${name}${def.valueHint ? ` ${def.valueHint}` : ''} is required`);
    if (def.type === 'enum' && value !== undefined && !(def.options ?? []).includes(value as string)) {
      throw usage(path, `bad --${name} ${JSON.stringify(value)} (one of ${(def.options ?? []).join(', ')})`);
    }
  }
  return values;
}

function usage(path: string[], message: string): UsageError {
  const e = new UsageError(path[1] ?? path[0], message);
  e.command = path.join(' ');
  return e;
}

/** A usage error for a value a command checks itself (a number out of range, a malformed date). */
export function badValue(command: string, message: string): UsageError {
  const e = new UsageError(command, message);
  e.command = `register ${command}`;
  return e;
}

/**
 * The keys of a `--trust` value (serve, pull, verify, edge dev: .pub files or `ed25519:…` keys, comma-separated), or
 * null when it is not given. Naming no key is a usage error; a key that cannot be read, a refusal naming it.
 */
export async function trustOption(command: string, value: string | undefined): Promise<TrustedKeys | null> {
  if (value === undefined) return null;
  const values = splitTrust(value);
  if (values.length === 0) throw badValue(command, '--trust names no key');
  try {
    return await readTrust(values);
  } catch (e) {
    throw new RegisterError(command, (e as Error).message);
  }
}

/**
 * Runs `register`'s whole command line and exits: 0 after help or a finished command (unless it keeps serving),
 * 2 for a usage error, 1 for any other refusal, which is printed as its one line (a RegisterError) or with its stack.
 */
export async function main(root: CommandDef<ArgsDef>, argv: string[]): Promise<void> {
  try {
    await runCommandLine(root, argv, ['register']);
  } catch (e) {
    endProgressLines();
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\nRun '${e.command} --help' for its options.\n`);
      process.exit(2);
    }
    if (e instanceof RegisterError) {
      process.stderr.write(e.message + '\n');
      process.exit(1);
    }
    throw e;
  }
}

async function resolve<T>(v: T | Promise<T> | (() => T) | (() => Promise<T>) | undefined): Promise<T | undefined> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v;
}
