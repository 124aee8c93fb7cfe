// Nothing the project installs or runs phones home: @scarf/scarf (pulled in by swagger-ui-dist) is switched off in
// package.json, which its install script reads, and every place that starts `serve`'s own CLI turns its update check off.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runToExit } from '../helpers/run-command.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('telemetry', () => {
  it("scarf's install script, run as npm runs it for this project, sends nothing", async () => {
    // SCARF_LOCAL_PORT sends its report to http://localhost:PORT instead of scarf.sh: a server there sees whether one is sent.
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: ROOT, SCARF_LOCAL_PORT: String(port), SCARF_VERBOSE: 'true' };
      for (const k of ['SCARF_ANALYTICS', 'SCARF_NO_ANALYTICS', 'DO_NOT_TRACK']) delete env[k];
      const scarf = join(ROOT, 'node_modules/@scarf/scarf');
      const run = await runToExit(process.execPath, [join(scarf, 'report.js')], { cwd: scarf, env, timeoutMs: 60_000 });
      expect(run.status).toBe(0);
      expect(run.stdout + run.stderr).toContain('User has opted out');
      expect(seen).toEqual([]);
    } finally {
      server.close();
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scarfSettings).toMatchObject({ enabled: false });
  });

  it("every start of serve's CLI (compose's static host, the benchmark's baseline) sets NO_UPDATE_CHECK", () => {
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/node_modules\/serve\/build\/main\.js"\]\n[\s\S]*?environment:\n(\s+#.*\n)*\s+NO_UPDATE_CHECK: "1"/);
    const bench = readFileSync(join(ROOT, 'bench/lib/serve-measure.ts'), 'utf8');
    expect(bench).toMatch(/node_modules\/serve\/build\/main\.js'[^\n]*\n(\s+\/\/.*\n)*\s+env: \{ \.\.\.process\.env, NO_UPDATE_CHECK: '1' \}/);
    // The tests host dists with serve-handler alone, which has no update check; nothing else starts serve's CLI.
    const sources = ['compose.yaml', 'Dockerfile', 'bench/lib/serve-measure.ts', 'scripts/soak.ts'].map((f) => readFileSync(join(ROOT, f), 'utf8'));
    expect(sources.join('\n').match(/serve\/build\/main\.js/g)).toHaveLength(2);
  });
});
