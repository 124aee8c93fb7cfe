// One temp folder per test run: every test, and every server or compile a test spawns, inherits TMPDIR, so all
// the fixture releases, dists and state folders they make (a few hundred MB a run) go when the run ends, also
// those of a test that failed before its own cleanup. And the JavaScript build that spawned commands run
// (bin/register.mjs), brought up to date once here rather than by the first of several commands started at once.
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../scripts/build.mjs';

/** Room a run's temp files may take, with a wide margin over the few hundred MB they do. */
const RUN_BYTES = 4 * 1024 ** 3;

/**
 * Where the run's folder goes: a RAM-backed /dev/shm when it has room, else the system's temp folder. The suite
 * creates tens of thousands of small files (each compile writes hundreds); on this VM's ext4 disk one costs ~0.27 ms
 * against ~0.02 ms on tmpfs, which took ~25 s off a run. Nothing a test asserts depends on it: the tests SIGKILL
 * processes, never the machine, and a kill loses nothing the page cache holds on either. IR_TEST_TMP overrides.
 */
function runParent(): string {
  if (process.env.IR_TEST_TMP) return process.env.IR_TEST_TMP;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize >= RUN_BYTES) return '/dev/shm';
  } catch {}
  return tmpdir();
}

/** Set while a run's folder exists: each vitest project inherits this setup, and the run makes one folder, not five. */
const RUN_MARK = 'IR_TEST_RUN_DIR';

export async function setup(): Promise<(() => void) | void> {
  if (process.env[RUN_MARK]) return;
  await ensureBuilt();
  const outer = process.env.TMPDIR;
  const dir = mkdtempSync(join(runParent(), 'ir-test-run-'));
  // Test workers are started after this and copy this process's environment.
  process.env.TMPDIR = dir;
  process.env[RUN_MARK] = dir;
  return () => {
    delete process.env[RUN_MARK];
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    if (!process.env.IR_KEEP_TEST_TMP) rmSync(dir, { recursive: true, force: true });
  };
}
