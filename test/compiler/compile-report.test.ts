// `register compile` writes an HTML report per release beside its summary lines and prints its path: counts, slack
// dropped per table, the changelog summary. Timings go to the terminal (each stage's with REGISTER_TIMINGS), never
// into the report, so the dist stays the same bytes for the same releases (compile-determinism.test.ts compares it
// whole). The report stays out of the content-addressed stamp folder, so the dist still verifies.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPORTS_DIR } from '../../compiler/compile-report.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';
import { fresh } from '../fixtures/refusals.ts';
import { runToExit } from '../helpers/run-command.ts';

const A = 'rt000000000000a1';
const B = 'rt000000000000b2';
const FIRST = '20261001T000000Z';
const NEXT = '20261008T000000Z';
const REGISTER = resolve('bin/register.mjs');

describe('compile report', () => {
  it('names the counts, the slack per table and the changelog, and is printed by register compile with each stage timed', async () => {
    const d = fresh();
    const first: Record<string, Rows> = {
      entities: [[A, 'team', 'active', 'Alpha', '', '', '', '', ''], [B, 'team', 'active', 'Beta', '', '', '', '', '']],
      bridges: [['opta', '', 't1', A, ''], ['opta', '', 't2', B, '']],
    };
    // The successor: a new fbref bridge (a provider update), and one bridge naming an ID the release lacks (slack).
    const next: Record<string, Rows> = { ...first, bridges: [...first.bridges!, ['fbref', '', 'f1', A, ''], ['opta', '', 't3', 'rt0000000000dead', '']] };
    writeHandRelease(d.releases, FIRST, first);
    writeHandRelease(d.releases, NEXT, next);
    const run = await runToExit(process.execPath, [REGISTER, 'compile', '--releases', d.releases, '--out', d.dist], { env: { ...process.env, REGISTER_TIMINGS: '1' } });
    expect(run.status, run.stderr).toBe(0);
    for (const stamp of [FIRST, NEXT]) {
      const path = join(d.dist, REPORTS_DIR, `${stamp}.html`);
      expect(run.stderr).toContain(`[compile] ${stamp}: report ${path}\n`);
      expect(existsSync(path)).toBe(true);
    }
    const html = readFileSync(join(d.dist, REPORTS_DIR, `${NEXT}.html`), 'utf8');
    expect(html).toContain(`<h1>Compile report ${NEXT}</h1>`);
    expect(html).toMatch(/<td>entities<\/td><td class="num">2<\/td>/);
    expect(html).toMatch(/<td>bridges<\/td><td class="num">3<\/td>/);
    expect(html).toMatch(/<td>csv\/bridges\.csv: unknown register ID<\/td><td class="num">1<\/td><td>row 4: rt0000000000dead<\/td>/);
    expect(html).toMatch(/<td>provider_updated<\/td><td class="num">1<\/td>/);
    expect(html).toMatch(/<td>fbref<\/td><td class="num">1<\/td>/);
    expect(html).toContain(`Changelog against <code>${FIRST}</code>`);
    // Each stage's time is printed, and none is in the report.
    // Stage 1's side thread is a declared step too: its bridges reading is timed as its own step.
    for (const stage of ['read redirects', 'read bridges', 'read tables', 'join tables', 'build entities', 'build resolve', 'build changelog', 'build documents']) {
      expect(run.stderr).toMatch(new RegExp(`\\[compile\\] ${NEXT}:   ${stage} +\\d+ ms wall`));
      expect(html).not.toContain(stage);
    }
    expect(run.stderr).toMatch(new RegExp(`\\[compile\\] ${NEXT}: 2 entities, 3 bridges, digest [0-9a-f]{16}, stages \\d+\\.\\d s\n`));
    expect(html).not.toMatch(/\bms\b|MiB/);
    // The first release: no predecessor, and no slack.
    const firstHtml = readFileSync(join(d.dist, REPORTS_DIR, `${FIRST}.html`), 'utf8');
    expect(firstHtml).toContain('no predecessor (the first release)');
    expect(firstHtml).toContain('None: every row names an ID the release holds.');
    // Outside every stamp's manifest: the dist verifies as compiled.
    const verify = await runToExit(process.execPath, [REGISTER, 'verify', '--dist', d.dist]);
    expect(verify.status, verify.stderr).toBe(0);
  });
});
