// One temp folder per test run: every test, and every server or compile a test spawns, inherits TMPDIR, so all
// the fixture releases, dists and state folders they make (a few hundred MB a run) go when the run ends, also
// those of a test that failed before its own cleanup. And the JavaScript build that spawned commands run
// (bin/register.mjs), brought up to date once here rather than by the first of several commands started at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../scripts/build.mjs';

export async function setup(): Promise<() => void> {
  await ensureBuilt();
  const outer = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'ir-test-run-'));
  // Test workers are started after this and copy this process's environment.
  process.env.TMPDIR = dir;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    if (!process.env.IR_KEEP_TEST_TMP) rmSync(dir, { recursive: true, force: true });
  };
}
