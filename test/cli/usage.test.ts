// The `register` command line, run as users run it (node bin/register.mjs, the JavaScript build): help on stdout
// for every command, --version, exit 2 for every kind of usage mistake, exit 1 for a refusal, never a stack trace.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommandLine, UsageError } from '../../cli/command-line.ts';
import { registerCommand } from '../../cli/register-command.ts';
import { runToExit } from '../helpers/run-command.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/register.mjs');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Runs `register args…` to its exit (several at once: each is a Node start-up). */
function register(args: string[], cwd = ROOT) {
  const env = { ...process.env };
  delete env.PORT; // serve's options are tested, not the environment's
  return runToExit(process.execPath, [BIN, ...args], { cwd, env });
}

const runAll = (cases: string[][], cwd?: string) => Promise.all(cases.map((args) => register(args, cwd)));

/** Every option each command has always had; the help must name each (and the parser accept it, tested below). */
const OPTIONS: Record<string, string[]> = {
  generate: ['--out', '--entities', '--seed', '--prior', '--gzip-level', '--force'],
  'import-v0': ['--from', '--out', '--force'],
  compile: ['--releases', '--out', '--stamp', '--strict', '--sign', '--valid-days', '--signed-at'],
  verify: ['--dist', '--trust', '--at'],
  check: ['--stamp', '--dist', '--origin', '--format'],
  pull: ['--out', '--stamp', '--trust', '--parallel'],
  sign: ['--dist', '--stamp', '--key', '--valid-days', '--signed-at'],
  'signing-key new': ['--out'],
  serve: ['--dist', '--private-dist', '--keys', '--state', '--read-only', '--port', '--host', '--workers', '--cache-mib', '--access-log', '--cursor-secret-file', '--trust'],
  start: ['--dist', '--private-dist', '--keys', '--state', '--read-only', '--port', '--host', '--workers', '--cache-mib', '--access-log', '--cursor-secret-file'],
  'keys add': ['--name', '--quota', '--rate', '--provider', '--expires', '--keys', '--state', '--edge'],
  'keys list': ['--keys', '--state', '--edge'],
  'keys revoke': ['--keys', '--state', '--edge'],
  'edge build': ['--out', '--name', '--bucket', '--private-bucket'],
  'edge dev': ['--dist', '--origin', '--port', '--persist', '--worker', '--trust'],
  'edge publish': ['--dist', '--bucket', '--private-bucket', '--local', '--persist'],
};

describe('register usage', () => {
  it('prints each command\'s help, with every option, on stdout and exits 0; --version prints the version', async () => {
    const commands = Object.keys(OPTIONS);
    const runs = await runAll([['--help'], [], ['--version'], ['keys', '--help'], ...commands.map((c) => [...c.split(' '), '--help']), ['compile', '-h', '--bogus']]);
    const [top, bare, version, keys, ...rest] = runs;
    for (const r of runs) {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).not.toMatch(/\x1b\[/); // not a terminal: no colour codes
    }
    expect(top.stdout).toMatch(/^USAGE register generate\|import-v0\|compile\|verify\|check\|pull\|sign\|signing-key\|serve\|start\|keys\|edge$/m);
    for (const c of ['generate', 'import-v0', 'compile', 'verify', 'pull', 'sign', 'signing-key', 'serve', 'start', 'keys', 'edge']) expect(top.stdout).toMatch(new RegExp(`^\\s+${c}\\s+\\S`, 'm'));
    expect(bare.stdout).toBe(top.stdout);
    expect(version.stdout).toBe(`${VERSION}\n`);
    expect(keys.stdout).toMatch(/USAGE register keys add\|list\|revoke/);
    for (const [i, c] of commands.entries()) {
      expect(rest[i].stdout, c).toMatch(new RegExp(`^USAGE register ${c} `, 'm'));
      for (const flag of OPTIONS[c]) expect(rest[i].stdout, `${c} ${flag}`).toMatch(new RegExp(`^\\s+${flag}\\b`, 'm'));
    }
    expect(rest.at(-1)!.stdout).toMatch(/^USAGE register compile /m); // help wins over a bad option
  });

  it('refuses a usage mistake in every command with a UsageError naming it, before running anything', async () => {
    const cases: [string[], RegExp][] = [
      [['complie'], /^\[register\] unknown command 'complie'/],
      [['--bogus'], /^\[register\] unknown option '--bogus' before the command/],
      [['generate', '--bogus'], /^\[generate\] Unknown option '--bogus'$/],
      [['generate', '--entities', '5', '--out', 'x/20260101T000000Z'], /^\[generate\] --entities must be a whole number from 60 to 5,000,000, got "5"/],
      [['generate', '--gzip-level', 'max', '--out', 'x/20260101T000000Z'], /^\[generate\] --gzip-level must be a whole number from 0 to 9/],
      [['generate'], /^\[generate\] --out releases\/<stamp> is required/],
      [['import-v0', '--out'], /^\[import-v0\] Option '--out <value>' argument missing/],
      [['compile', 'releases'], /^\[compile\] unexpected argument 'releases'/],
      [['compile', '--strict=yes'], /^\[compile\] Option '--strict' does not take an argument/],
      [['verify', '--dist'], /^\[verify\] Option '--dist <value>' argument missing/],
      [['serve', '--port', 'eighty'], /^\[serve\] --port: bad port "eighty"/],
      [['serve', '--workers', '0'], /^\[serve\] bad --workers "0"/],
      [['serve', '--cache-mib', '2'], /^\[serve\] bad --cache-mib "2" \(a whole number from 4 to 65536\)/],
      [['sign', '--key', 'no.key', '--valid-days', 'zero'], /^\[sign\] bad --valid-days "zero"/],
      [['verify', '--at', '2027-01-01'], /^\[verify\] --at checks signatures: give --trust too/],
      [['verify', '--trust', ' , '], /^\[verify\] --trust names no key/],
      [['pull', 'http://127.0.0.1:9/', '--out', 'x', '--trust', ''], /^\[pull\] --trust names no key/],
      [['edge', 'dev', '--dist', 'dist', '--port', '0', '--trust', ','], /^\[edge\] --trust names no key/],
      [['serve', '--access-log', 'loud'], /^\[serve\] bad --access-log "loud" \(one of on, off\)/],
      [['start', '--no-such'], /^\[start\] Unknown option '--no-such'/],
      [['keys', 'add'], /^\[keys\] --name NAME is required/],
      [['keys', 'revoke'], /^\[keys\] expected 1 argument\(s\) \(ID\), got 0/],
      [['keys', 'list', '--colour'], /^\[keys\] Unknown option '--colour'/],
    ];
    const cwd = process.cwd();
    process.chdir(mkdtempSync(join(tmpdir(), 'cli-usage-'))); // nothing may be written, wherever it would go
    try {
      for (const [args, message] of cases) {
        let out = '';
        const e = await runCommandLine(registerCommand, args, ['register'], { out: (t) => void (out += t), err: (t) => void (out += t) }).catch((x: unknown) => x);
        expect(e, args.join(' ')).toBeInstanceOf(UsageError);
        expect((e as Error).message, args.join(' ')).toMatch(message);
        expect(out).toBe('');
      }
      expect(readdirSync('.')).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses an option given twice instead of keeping its last value, so no --trust key is silently dropped', async () => {
    const cases: [string[], RegExp][] = [
      [['verify', '--trust', 'a.pub', '--trust', 'b.pub'], /^\[verify\] --trust is given 2 times; give it once$/],
      [['pull', 'http://127.0.0.1:9/', '--out', 'x', '--trust=a.pub', '--trust', 'b.pub'], /^\[pull\] --trust is given 2 times; give it once$/],
      [['serve', '--trust', 'a.pub', '--port', '0', '--trust', 'b.pub'], /^\[serve\] --trust is given 2 times; give it once$/],
      [['compile', '--strict', '--strict'], /^\[compile\] --strict is given 2 times; give it once$/],
    ];
    for (const [args, message] of cases) {
      const e = await runCommandLine(registerCommand, args, ['register'], { out: () => {}, err: () => {} }).catch((x: unknown) => x);
      expect(e, args.join(' ')).toBeInstanceOf(UsageError);
      expect((e as Error).message, args.join(' ')).toMatch(message);
    }
  });

  it('exits 2 for a usage mistake, pointing at the command\'s help, without a stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [['complie'], /^\[register\] unknown command 'complie'.*\nRun 'register --help' for its options\.\n$/],
      [['compile', '--bogus'], /^\[compile\] Unknown option '--bogus'\nRun 'register compile --help' for its options\.\n$/],
      [['serve', '--port'], /^\[serve\] Option '--port <value>' argument missing\nRun 'register serve --help' for its options\.\n$/],
      [['generate', '--entities', '5', '--out', 'x/20260101T000000Z'], /^\[generate\] --entities must be .*\nRun 'register generate --help' for its options\.\n$/],
      [['keys'], /^\[keys\] missing command .*\nRun 'register keys --help' for its options\.\n$/],
    ];
    const runs = await runAll(cases.map(([args]) => args), mkdtempSync(join(tmpdir(), 'cli-usage-')));
    for (const [i, [args, message]] of cases.entries()) {
      expect(runs[i].status, `${args.join(' ')}: ${runs[i].stderr}`).toBe(2);
      expect(runs[i].stderr, args.join(' ')).toMatch(message);
      expect(runs[i].stdout).toBe('');
    }
  });

  it('exits 1, naming the folder, when --releases is missing, a file, empty, or one release rather than their folder', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-releases-'));
    const made = await register(['generate', '--out', 'releases/20260101T000000Z', '--entities', '60'], cwd);
    expect(made.status, made.stderr).toBe(0);
    const runs = await runAll([
      ['compile', '--releases', join(cwd, 'nonexistent')],
      ['compile', '--releases', join(cwd, 'releases/20260101T000000Z/release.json')],
      ['compile', '--releases', join(cwd, 'releases/20260101T000000Z/csv')],
      ['compile', '--releases', join(cwd, 'releases/20260101T000000Z')],
    ], cwd);
    const messages = [
      /^\[compile\] no releases folder .*\/nonexistent\/ \(--releases names the folder that holds the <stamp>\/ releases\)\n$/,
      /^\[compile\] --releases .*release\.json is not a folder\n$/,
      /^\[compile\] no release under .*\/csv\/ /,
      /^\[compile\] .*20260101T000000Z is a release, not a folder of releases: give --releases .*\/releases\n$/,
    ];
    for (const [i, r] of runs.entries()) {
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(messages[i]);
    }
  });
});
