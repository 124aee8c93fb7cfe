// The in-process tier's rule, checked as it runs (a setup file of that vitest project): its files call code and
// apps in this process and start no socket server and no child process, so they stay quick and cannot race a port or a
// process on a busy machine. Every way Node starts either goes through net.Server's listen or child_process, so those
// are refused here with the file's name; a file that needs one belongs to another project (vitest.config.ts).
// Connecting out (fetch to a host) and worker threads stay allowed.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { relative } from 'node:path';
import { expect } from 'vitest';

const GUARDED = Symbol.for('identity-register.in-process-guard');

function refuse(what: string): never {
  const path = expect.getState().testPath;
  const file = path ? relative(process.cwd(), path) : 'a test file';
  throw new Error(
    `${file} ${what}, but it runs in the in-process tier, which starts no socket server and no child process: ` +
      `name it in the 'sockets' project (or 'edge', 'browser', 'reliability') of vitest.config.ts`,
  );
}

const marks = globalThis as { [GUARDED]?: true };
// isolate: false: a worker runs many files of the project, and the patch stays from the first.
if (!marks[GUARDED]) {
  marks[GUARDED] = true;
  net.Server.prototype.listen = function listen(): never {
    refuse('opens a listening socket (net.Server#listen: an HTTP server, a proxy, a fake origin)');
  };
  // spawn, fork, exec and execFile all start their process through ChildProcess#spawn.
  // (An internal method, untyped: the one place every asynchronous start passes.)
  (childProcess.ChildProcess.prototype as unknown as { spawn(options: { file?: string }): never }).spawn = function spawn(options) {
    refuse(`starts a child process (${options?.file ?? 'unknown'})`);
  };
  for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
    Object.assign(childProcess, { [name]: (file: string) => refuse(`starts a child process (${name} ${String(file).split(' ')[0]})`) });
  }
  // ESM's named imports of node:child_process see the patched functions too.
  syncBuiltinESMExports();
}
