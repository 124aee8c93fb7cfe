// Progress lines: `register generate` and `register compile` under a pseudo-terminal (util-linux `script`) draw a
// line per stage with counts (and a total and ETA where the stage knows one); with stderr not a terminal they draw
// nothing at all. The first drawing happens as a stage starts, so this holds however fast the machine is.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToExit } from '../helpers/run-command.ts';

const BIN = fileURLToPath(new URL('../../bin/register.mjs', import.meta.url));
const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

const run = (file: string, args: string[], cwd: string) => runToExit(file, args, { cwd, env: { ...process.env, TERM: 'xterm', COLUMNS: '200' } });

/** `register args…` with its stdout and stderr on a pseudo-terminal; what the terminal received. */
const onTerminal = (args: string[], cwd: string) => {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return run('script', ['-qec', command, '/dev/null'], cwd);
};

/** What a terminal shows line by line once cursor moves and erases are read as line breaks. */
const screens = (raw: string): string[] =>
  raw
    .split(/\x1b\[1G|\r|\n/)
    .map((l) => l.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '').trim())
    .filter(Boolean);

describe.runIf(SCRIPT)('progress lines', () => {
  it('draws counts, a total and an ETA on a terminal, and nothing when stderr is a pipe', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-progress-'));
    try {
      const gen = await onTerminal(['generate', '--out', 'releases/20260101T000000Z', '--entities', '600'], cwd);
      expect(gen.status, gen.stdout).toBe(0);
      const genLines = screens(gen.stdout);
      expect(genLines.some((l) => /^\[generate\] write 20260101T000000Z \[[=-]{24}\] [\d,]+\/[\d,]+ rows \d+% \([\d,]+ rows\/s\) ETA /.test(l)), genLines.join('\n')).toBe(true);
      expect(genLines.at(-1)).toMatch(/^releases\/20260101T000000Z: 600 entities/);

      const compile = await onTerminal(['compile', '--out', 'dist-tty'], cwd);
      expect(compile.status, compile.stdout).toBe(0);
      const lines = screens(compile.stdout);
      // Counted stages: a bar with done/total, a rate and an ETA.
      expect(lines.some((l) => /^\[compile\] read tables \[[=-]{24}\] [\d,]+\/[\d,]+ rows \d+% \([\d,]+ rows\/s\) ETA /.test(l)), lines.join('\n')).toBe(true);
      expect(lines.some((l) => /^\[compile\] build entity shards \(2 ranges\) \[[=-]{24}\] \d+\/256 partitions /.test(l)), lines.join('\n')).toBe(true);
      // Every other stage at least says it runs.
      for (const stage of ['order search docs', 'build search docs', 'build changelog', 'manifest and fsync']) {
        expect(lines.some((l) => l.startsWith(`[compile] ${stage}…`)), stage).toBe(true);
      }
      expect(lines.at(-1)).toMatch(/^\[compile\] 1 release\(s\) in [\d.]+ s$/);
      expect(compile.stdout).toContain('\x1b[2K'); // each line is erased when its stage ends

      // The same commands with stderr on a pipe: the summary lines only.
      const quietGen = await run(process.execPath, [BIN, 'generate', '--out', 'releases/20260102T000000Z', '--prior', 'releases/20260101T000000Z'], cwd);
      expect(quietGen.status, quietGen.stderr).toBe(0);
      expect(quietGen.stderr).toMatch(/^releases\/20260102T000000Z: [\d,]+ entities, .* prior 20260101T000000Z in [\d.]+s\n$/);
      const quiet = await run(process.execPath, [BIN, 'compile', '--out', 'dist-tty'], cwd);
      expect(quiet.status, quiet.stderr).toBe(0);
      expect(quiet.stderr).not.toMatch(/\x1b|…|ETA|rows\/s/);
      expect(quiet.stderr).toMatch(/^\[compile\] 20260102T000000Z: /);
      expect(quiet.stderr.split('\n').filter(Boolean).every((l) => /^\[compile\] (20260102T000000Z: |1 release\(s\) in )/.test(l)), quiet.stderr).toBe(true);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
