// The image without a Docker daemon: exactly the files the Dockerfile's build stage copies (less what .dockerignore
// keeps out of the context) are assembled in a scratch folder, the stage's install step runs there as written, and
// the copy compiles a sample release and serves it. The compose file gives its instances one cursor secret.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api-client.ts';
import { runToExit } from '../helpers/run-command.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** The build stage: from its FROM line to the next one; continuation lines joined. */
const buildStage = dockerfile.split(/^FROM /m)[1].replace(/\\\n\s*/g, ' ');
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

/** A .dockerignore pattern as a test of a context-relative path (Go's filepath.Match: `*` stays within a segment). */
function ignoredBy(pattern: string): (path: string) => boolean {
  const p = pattern.replace(/^\//, '');
  const re = new RegExp('^' + p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*') + '(/|$)');
  return (path) => re.test(path);
}
const isIgnored = (path: string) => ignored.some((p) => ignoredBy(p)(path));

/** Copies `src` (a file or folder of the context) to `dest`, leaving out what the context does not carry. */
function copyFromContext(src: string, dest: string): void {
  const from = join(ROOT, src);
  if (isIgnored(relative(ROOT, from))) return;
  if (statSync(from).isDirectory()) {
    mkdirSync(dest, { recursive: true });
    for (const name of readdirSync(from)) copyFromContext(join(src, name), join(dest, name));
  } else {
    mkdirSync(dirname(dest), { recursive: true });
    cpSync(from, dest);
  }
}

/** The packages that carry workerd or deploy to Cloudflare: miniflare, wrangler, workerd and its platform builds. */
const EDGE_TOOLS = /^(miniflare|wrangler|workerd|@cloudflare\/workerd-.*)$/;

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('the Dockerfile and compose.yaml', () => {
  it('.dockerignore keeps keys, state, secrets and local installs out of the build context', () => {
    for (const path of ['node_modules', 'node_modules/x/y.js', 'keys.json', '.cursor-secret', '.state/register.db', 'dist/index.json', 'tmp/v0', 'build/register.mjs', 'test-output/a.png', 'bench/out/r.json', '.git/HEAD']) {
      expect(isIgnored(path), path).toBe(true);
    }
    for (const path of ['package.json', 'runtime/server.ts', 'generator/from-v0.ts', 'scripts/build.mjs']) expect(isIgnored(path), path).toBe(false);
  });

  it('compose gives every API instance the same cursor secret, and the static host no update check', () => {
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    // api-2 is api-1 merged (`<<: *api`), so what the anchored service says holds for both.
    const api = /^ {2}api-1: &api\n([\s\S]*?)\n {2}api-2:\n {4}<<: \*api\n/m.exec(compose);
    expect(api, 'api-2 merges api-1').not.toBeNull();
    expect(api![1]).toMatch(/"--cursor-secret-file", "\/run\/secrets\/cursor_secret"/);
    expect(api![1]).toMatch(/secrets:\n\s+- cursor_secret\n/);
    expect(compose).toMatch(/^secrets:\n {2}cursor_secret:\n {4}file: \.\/\.cursor-secret\n/m);
    const dist = /^ {2}dist:\n([\s\S]*?)\n\n/m.exec(compose)![1];
    expect(dist).toContain('node_modules/serve/build/main.js');
    expect(dist).toMatch(/environment:\n(\s+#.*\n)*\s+NO_UPDATE_CHECK: "1"/);
  });

  // The edge's local runtime (miniflare, which ships workerd's binary) and Cloudflare's CLI are development
  // dependencies: the image serves on Node and never needs them. The lockfile says what `npm ci --omit=dev` installs.
  it('installs no workerd, miniflare or wrangler with --omit=dev', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const installed = Object.entries(lock.packages).filter(([path, p]) => path !== '' && !p.dev).map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(installed.length).toBeGreaterThan(20);
    expect(installed.filter((name) => EDGE_TOOLS.test(name))).toEqual([]);
    // Still there for development (the edge tests, `register edge dev`).
    expect(Object.keys(lock.packages).filter((path) => EDGE_TOOLS.test(path.replace(/^.*node_modules\//, ''))).length).toBeGreaterThanOrEqual(3);
  });

  it("the build stage's COPY lines and install step build a copy that compiles and serves a release, /matches included", async () => {
    const work = join(tmpdir(), `container-${process.pid}`);
    const app = join(work, 'app');
    const copies = [...buildStage.matchAll(/^COPY (?!--)(.+)$/gm)].map((m) => m[1].trim().split(/\s+/));
    expect(copies.length).toBeGreaterThan(0);
    for (const parts of copies) {
      const dest = parts.at(-1)!;
      const sources = parts.slice(0, -1);
      for (const src of sources) copyFromContext(src, dest.endsWith('/') ? join(app, dest, src.split('/').at(-1)!) : join(app, dest));
    }
    const install = [...buildStage.matchAll(/^RUN (.*npm ci.*)$/gm)].map((m) => m[1]);
    expect(install).toHaveLength(1);
    // better-sqlite3 fetches a prebuilt binary (from GitHub) or compiles one (a minute of CPU): this machine reaches
    // neither GitHub nor has a minute to spare, so its prebuild-install finds the binary the project's own install
    // made, packed as the release asset it would download. Packages come from the npm cache when it has them.
    const prebuilds = join(work, 'prebuilds');
    const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string };
    const asset = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    mkdirSync(prebuilds, { recursive: true });
    const packed = await runToExit('tar', ['-czf', join(prebuilds, asset), '-C', join(ROOT, 'node_modules/better-sqlite3'), 'build/Release/better_sqlite3.node']);
    expect(packed.status, packed.stderr).toBe(0);
    const env = { ...process.env, npm_config_better_sqlite3_local_prebuilds: prebuilds, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };
    const built = await runToExit('sh', ['-c', install[0]], { cwd: app, env, timeoutMs: 170_000 });
    expect(built.status, built.stdout + built.stderr).toBe(0);
    expect(existsSync(join(app, 'build/register.mjs'))).toBe(true);
    // No workerd in the image: what was installed, and what the edge's commands then say.
    const modules = [...readdirSync(join(app, 'node_modules')), ...(existsSync(join(app, 'node_modules/@cloudflare')) ? readdirSync(join(app, 'node_modules/@cloudflare')).map((n) => `@cloudflare/${n}`) : [])];
    expect(modules.filter((name) => EDGE_TOOLS.test(name))).toEqual([]);

    // What the image runs: node bin/register.mjs, NODE_ENV=production (the runtime stage's ENV).
    const runEnv = { ...process.env, NODE_ENV: 'production' };
    const register = (args: string[]) => runToExit(process.execPath, [join(app, 'bin/register.mjs'), ...args], { cwd: work, env: runEnv });
    const compiled = await register(['compile', '--releases', join(ROOT, 'releases'), '--out', join(work, 'dist'), '--stamp', '20261001T120000Z']);
    expect(compiled.status, compiled.stderr).toBe(0);
    for (const args of [['edge', 'dev', '--dist', join(work, 'dist'), '--port', '0'], ['edge', 'publish', '--dist', join(work, 'dist'), '--bucket', 'b']]) {
      const edge = await register(args);
      expect(edge.status, edge.stderr).toBe(1);
      expect(edge.stderr).toContain('npm install -D wrangler miniflare');
    }
    const added = await register(['keys', 'add', '--name', 'container', '--keys', join(work, 'keys.json')]);
    expect(added.status, added.stderr).toBe(0);
    const key = added.stdout.trim().split('\n').at(-1)!;
    // The cursor secret as compose.yaml hands it over: a file, read with --cursor-secret-file.
    writeFileSync(join(work, 'cursor-secret'), randomBytes(32).toString('hex'));
    const server = spawn(
      process.execPath,
      [join(app, 'bin/register.mjs'), 'serve', '--dist', join(work, 'dist'), '--state', `sqlite:${join(work, 'register.db')}`, '--keys', join(work, 'keys.json'),
        '--cursor-secret-file', join(work, 'cursor-secret'), '--port', '0', '--access-log', 'off'],
      { cwd: work, env: runEnv, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(server);
    const base = await new Promise<string>((resolve, reject) => {
      let err = '';
      server.stderr!.on('data', (d: Buffer) => {
        err += d;
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/api\/v1)/.exec(err);
        if (m) resolve(m[1]);
      });
      server.once('exit', (code) => reject(new Error(`serve exited ${code} before listening:\n${err}`)));
    });
    const call = client(base, key);
    const meta = await call('/meta');
    expect(meta.status).toBe(200);
    expect(meta.json.release.stamp).toBe('20261001T120000Z');
    expect((await call('/matches?team=transfermarkt:verein:465887&from=2025-07-01&to=2026-06-30')).status).toBe(200);
    server.kill('SIGTERM');
  });
});
