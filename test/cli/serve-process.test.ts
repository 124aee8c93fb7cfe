// `register serve` and `start` as an operator runs them, in real processes: under npm (`npm start`, `npx register
// serve`) a SIGTERM to npm stops the server; start-up names the dist it cannot find, the state store and the keys;
// and the access log reaches stdout while the server runs, not only at exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/redis-server.ts';
import { makeHandWorld, type World } from '../fixtures/hand-world.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/register.mjs');
const LISTENING = /\[serve\] listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1 \(([^\n]*)\)\n/;

interface Started {
  proc: ChildProcess;
  /** The server's base URL, once its listening line is out. */
  ready: Promise<string>;
  out(): string;
  err(): string;
}

/** Spawns a command whose output names a listening server, collecting both streams. */
function start(file: string, args: string[], cwd: string): Started {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false' };
  delete env.PORT;
  const proc = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.push(proc);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = LISTENING.exec(err);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code, signal) => reject(new Error(`${file} ${args.join(' ')} exited (${signal ?? code}) before listening:\n${err}`)));
  });
  ready.catch(() => {});
  return { proc, ready, out: () => out, err: () => err };
}

/** A process's parent, state and start time (which tells it from a later process given the same pid) from /proc, or null once it is gone. */
function procStat(pid: number): { ppid: number; state: string; started: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid … starttime (field 22) …`: comm may hold spaces and parentheses, so read after its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), state: fields[0]!, started: fields[19]! };
  } catch {
    return null;
  }
}

/** Every process below `root` (its children, theirs, …), read from /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st) parentOf.set(Number(name), st.ppid);
  }
  const found: number[] = [];
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (below.has(ppid) && !below.has(pid)) {
        below.add(pid);
        found.push(pid);
        grew = true;
      }
    }
  }
  return found;
}

/** Gone (or its pid now another process's), or a zombie waiting to be reaped: it runs no code and holds no port. */
const ended = (pid: number): boolean => {
  const st = procStat(pid);
  return st === null || st.started !== seen.get(pid) || st.state === 'Z';
};

const refused = async (url: string): Promise<boolean> => {
  try {
    await fetch(`${url}/healthz`);
    return false;
  } catch {
    return true;
  }
};

const spawned: ChildProcess[] = [];
/** Processes the test saw below the ones it spawned (npm's shell, the server) and their start times: killed at the end if still there. */
const seen = new Map<number, string>();
let world: World;
let keys: string;

beforeAll(async () => {
  world = await makeHandWorld();
  keys = join(world.root, 'keys.json');
  await addKey({ file: keys, name: 'serve-process', quota: 100, rate: 100 });
});

afterAll(() => {
  for (const pid of seen.keys()) if (!ended(pid)) process.kill(pid, 'SIGKILL');
  for (const p of spawned) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

describe('serve under npm', () => {
  it('a SIGTERM to `npm start` or to `npx register serve` stops the server: its port closes and nothing it started remains', async () => {
    // A project that depends on the register: npm links the bin into node_modules/.bin, which npx runs.
    mkdirSync(join(world.root, 'node_modules/.bin'), { recursive: true });
    symlinkSync(BIN, join(world.root, 'node_modules/.bin/register'));
    const serveArgs = ['--keys', keys, '--state', 'memory:', '--port', '0', '--access-log', 'off'];
    // `start` as the project's package.json has it (compile releases/ if needed, then serve), on the hand world.
    const script = ['node', BIN, 'start', '--dist', 'dist', ...serveArgs].map((a) => JSON.stringify(a)).join(' ');
    writeFileSync(join(world.root, 'package.json'), JSON.stringify({ name: 'serve-process-test', private: true, scripts: { start: script } }));
    const runs = [start('npm', ['start'], world.root), start('npx', ['register', 'serve', '--dist', world.dist, ...serveArgs], world.root)];
    const urls = await Promise.all(runs.map((r) => r.ready));
    for (const url of urls) expect((await client(url)('/healthz')).status).toBe(200);
    const below = runs.map((r) =>
      descendants(r.proc.pid!).filter((pid) => {
        const st = procStat(pid);
        if (st) seen.set(pid, st.started);
        return st !== null;
      }),
    );
    // npm's shell and the server itself at least.
    for (const pids of below) expect(pids.length).toBeGreaterThanOrEqual(2);
    for (const r of runs) r.proc.kill('SIGTERM');
    await Promise.all(
      runs.map(async (r, i) => {
        await eventually(`${r.proc.spawnfile}: the port to close`, () => refused(urls[i]!));
        await eventually(`${r.proc.spawnfile}: processes ${below[i]!.join(', ')} to end`, () => below[i]!.every(ended));
      }),
    );
    for (const r of runs) expect(r.err()).toMatch(/the npm process that started this one is gone .*; stopping\n\[serve\] SIGTERM: finishing in-flight requests/);
  });
});

describe('serve start-up lines and access log', () => {
  it('warns naming a missing dist folder or an unreachable dist URL (credentials left out), names the state store and the keys, writes an access line within a second while serving, and stops on SIGHUP too', async () => {
    const missing = join(world.root, 'not-compiled-yet');
    const stateDb = join(mkdtempSync(join(tmpdir(), 'ir-serve-process-')), 'state.db');
    const closedPort = await freePort();
    const node = (args: string[]) => start(process.execPath, [BIN, 'serve', '--keys', keys, '--port', '0', ...args], ROOT);
    const local = node(['--dist', missing, '--state', `sqlite:${stateDb}`]);
    const remote = node(['--dist', `http://reader:hunter2@127.0.0.1:${closedPort}/dist/`, '--state', 'memory:']);
    const [localUrl, remoteUrl] = await Promise.all([local.ready, remote.ready]);

    expect(LISTENING.exec(local.err())![2]).toBe(`dist ${missing}, state sqlite:${stateDb}, keys ${keys}`);
    expect(LISTENING.exec(remote.err())![2]).toBe(`dist http://127.0.0.1:${closedPort}/dist/, state memory:, keys ${keys}`);
    await eventually('the missing folder warning', () => local.err().includes(`[serve] warning: --dist ${missing}: no such folder; serving anyway`));
    await eventually('the unreachable URL warning', () => remote.err().includes(`[serve] warning: --dist cannot be reached (GET http://127.0.0.1:${closedPort}/dist/index.json: `));
    expect(existsSync(missing)).toBe(false);
    expect(remote.err()).not.toContain('hunter2');

    // The access log (on by default, to stdout) is buffered: one request's line must still arrive while serving.
    const res = await client(localUrl)('/readyz', { headers: { 'x-request-id': 'flush-check-1' } });
    expect(res.status).toBe(503);
    await eventually('the access line on stdout', () => local.out().includes('"request_id":"flush-check-1"'), 15_000);
    expect(local.proc.exitCode).toBeNull();
    const line = JSON.parse(local.out().split('\n').find((l) => l.includes('flush-check-1'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ method: 'GET', path: '/readyz', status: 503 });
    expect((await client(remoteUrl)('/healthz')).status).toBe(200);

    // A closed terminal's SIGHUP stops as gracefully as SIGTERM.
    const exits = [local, remote].map((s) => new Promise((r) => s.proc.once('exit', (code) => r(code))));
    local.proc.kill('SIGTERM');
    remote.proc.kill('SIGHUP');
    expect(await Promise.all(exits)).toEqual([0, 0]);
    expect(remote.err()).toContain('[serve] SIGHUP: finishing in-flight requests');
  });
});
