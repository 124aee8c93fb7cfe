// Every shell and TypeScript block of README.md and docs/*.md runs as written, against the server it is written for.
//
// A block says which by an HTML comment on the line before its fence:
//   <!-- doc-block: run samples -->           run against what `npm start` serves (the sample releases), KEY its key
//   <!-- doc-block: run real -->              run in the walkthrough's clone, with the v0 data beside it
//   <!-- doc-block: file samples NAME -->     saved as NAME in the clone (and type-checked) for a later block to run
//   <!-- doc-block: not run: WHY -->          not run, and why
// The blocks of one document and world run in order in one bash, as a reader pastes them into one terminal, in a
// scratch clone: `npx X` runs the project's own bin X (as npx does in the clone, without its start-up cost), the
// documented ports 8787 and 8788 become free ones. Between blocks the test waits for what a reader waits for without
// noticing: a server started with `&` to listen, a running server to read new keys (two key checks) or a new compile.
// Every curl and every fetch of the TypeScript is recorded and must answer 200, match the OpenAPI document and find
// something (a count, a list or a changelog that is not empty).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runToExit } from '../helpers/run-command.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHARED = resolve(ROOT, '../shared');
const HAS_V0 = existsSync(join(SHARED, 'real-data/v0-register'));
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const CODE = new Set(['sh', 'bash', 'shell', 'ts', 'typescript', 'js', 'javascript']);
const WORLDS = ['samples', 'real'] as const;
type World = (typeof WORLDS)[number];

interface Block {
  doc: string;
  line: number;
  lang: string;
  text: string;
  marker: string | null;
}

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    let prev = i - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    const marker = prev >= 0 ? (/^<!-- doc-block: (.+) -->$/.exec(lines[prev].trim())?.[1] ?? null) : null;
    out.push({ doc, line: i + 1, lang: open[1], text: lines.slice(i + 1, end).join('\n'), marker });
    i = end;
  }
  return out;
}
const ALL = DOCUMENTS.flatMap(blocksOf);

/** Commands of a shell block: continuation lines joined, comment-only and blank lines left out. */
function commandsOf(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) pending += line.slice(0, -1) + ' ';
    else {
      out.push(pending + line);
      pending = '';
    }
  }
  return out;
}
const withoutComment = (cmd: string) => cmd.replace(/\s+#[^'"]*$/, '');
const inBackground = (cmd: string) => /[^&]&\s*$/.test(withoutComment(cmd));

// --- the scratch clone -----------------------------------------------------------------------------------------
const work = join(tmpdir(), `doc-blocks-${process.pid}`);
const clone = join(work, 'clone');
const bin = join(work, 'bin');
const groups: number[] = [];
let samples: { proc: ChildProcess; key: string } | null = null;
const ports = { samples: [0, 0], real: [0, 0] } as Record<World, [number, number]>;

function makeClone(): void {
  if (existsSync(clone)) return;
  mkdirSync(join(clone, 'node_modules'), { recursive: true });
  mkdirSync(bin, { recursive: true });
  symlinkSync(join(ROOT, 'releases'), join(clone, 'releases'));
  symlinkSync(ROOT, join(clone, 'node_modules/identity-register'));
  // The clone's package.json makes its .ts files ES modules; without the project's name, so the import of
  // identity-register/client goes through node_modules to the project (the clone has no build/ of its own).
  writeFileSync(join(clone, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  if (HAS_V0) symlinkSync(SHARED, join(work, 'shared'));
  // npx in the clone runs the project's bins; a failure is recorded, since `export X=$(npx …)` hides its status.
  writeFileSync(
    join(bin, 'npx'),
    `#!/bin/bash
cmd=$1; shift
if [ "$cmd" = register ]; then run=(node "$DOC_ROOT/bin/register.mjs")
elif [ -x "$DOC_ROOT/node_modules/.bin/$cmd" ]; then run=("$DOC_ROOT/node_modules/.bin/$cmd")
else echo "npx $cmd: not a bin of the project" >> "$DOC_OUT/failures"; exit 127; fi
[ "$cmd" = tsx ] && export NODE_OPTIONS="--import=$DOC_PRELOAD"
case "$1" in serve|start) exec "\${run[@]}" "$@";; esac
"\${run[@]}" "$@"; rc=$?
[ $rc -eq 0 ] || echo "npx $cmd $*: exit $rc" >> "$DOC_OUT/failures"
exit $rc
`,
  );
  chmodSync(join(bin, 'npx'), 0o755);
  // The TypeScript's fetches, recorded like curl's answers.
  writeFileSync(
    join(work, 'record-fetch.mjs'),
    `import { appendFileSync } from 'node:fs';
const real = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const req = new Request(input, init);
  const res = await real(input, init);
  const body = Buffer.from(await res.clone().arrayBuffer()).toString('base64');
  appendFileSync(process.env.DOC_OUT + '/fetches.jsonl', JSON.stringify({ method: req.method, url: req.url, status: res.status, headers: [...res.headers], body }) + '\\n');
  return res;
};
`,
  );
}

/** What every session's bash defines before the blocks. */
const PRELUDE = `
DOC_N=0
curl() {
  DOC_N=$((DOC_N + 1))
  command curl -sS -D "$DOC_OUT/$DOC_N.head" -o "$DOC_OUT/$DOC_N.body" -w '%{http_code} %{method} %{url_effective}\\n' "$@" >> "$DOC_OUT/calls" \\
    || echo "curl $*: exit $?" >> "$DOC_OUT/failures"
}
DOC_LIVE=()
doc_wait() { # what, then a command that succeeds when it holds; 300 tries of 0.1 s at most
  local i; for i in $(seq 300); do eval "$2" && return 0; sleep 0.1; done
  echo "waited in vain for $1" >> "$DOC_OUT/failures"; return 1
}
doc_ready() { doc_wait "a server on port $1" "command curl -sf -o /dev/null http://127.0.0.1:$1/readyz" || return 1; [ "$2" = pinned ] || DOC_LIVE+=("$1"); }
doc_checks() { command curl -s "http://127.0.0.1:$1/metrics" | sed -n 's/^register_key_checks_total //p'; }
doc_keys_read() { local p n; for p in "\${DOC_LIVE[@]}"; do n=$(doc_checks "$p"); doc_wait "new keys read on $p" "[ \\$(doc_checks $p) -ge $((n + 2)) ]"; done; }
doc_release_read() { local v p; v=$(node -p "JSON.parse(require('fs').readFileSync('$1/index.json','utf8')).v1")
  for p in "\${DOC_LIVE[@]}"; do doc_wait "release $v served on $p" "command curl -s http://127.0.0.1:$p/api/v1/ | grep -q '\\"stamp\\":\\"$v\\"'"; done; }
`;

/** A session's script: each block's commands, each followed by its status check, and the waits between blocks. */
function scriptOf(blocks: Block[], world: World): { script: string; curls: number } {
  const [p1, p2] = ports[world];
  // The servers the session waits for: the samples' one, which the test started, and those its blocks start.
  let script = PRELUDE + (world === 'samples' ? `DOC_LIVE=(${p1})\n` : '');
  let curls = 0;
  for (const b of blocks) {
    const text = b.text.replaceAll('8787', String(p1)).replaceAll('8788', String(p2));
    for (const cmd of commandsOf(text)) {
      const where = `${b.doc}:${b.line}`;
      if (/^curl\s/.test(cmd)) curls++;
      script += `${cmd}\n`;
      if (inBackground(cmd)) {
        const port = /--port (\d+)/.exec(cmd)?.[1] ?? String(p1);
        script += `doc_ready ${port} ${/--stamp /.test(cmd) ? 'pinned' : 'live'} || exit 1\n`;
      } else {
        script += `doc_rc=$?; [ $doc_rc -eq 0 ] || echo ${JSON.stringify(`${where}: exit `)}$doc_rc >> "$DOC_OUT/failures"\n`;
      }
    }
    if (/register keys (add|revoke)/.test(text)) script += 'doc_keys_read\n';
    for (const m of text.matchAll(/register compile .*--out (\S+)/g)) script += `doc_release_read ${m[1]}\n`;
  }
  return { script, curls };
}

interface Answer {
  what: string;
  method: string;
  url: string;
  status: number;
  headers: Headers;
  body: Buffer;
}

function headersOf(raw: string): Headers {
  const h = new Headers();
  const last = raw.trim().split(/\r?\n\r?\n/).at(-1)!; // after any 100 Continue
  for (const line of last.split(/\r?\n/).slice(1)) {
    const at = line.indexOf(':');
    if (at > 0) h.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return h;
}

function answersOf(out: string): Answer[] {
  const answers: Answer[] = [];
  const calls = existsSync(join(out, 'calls')) ? readFileSync(join(out, 'calls'), 'utf8').trim().split('\n').filter(Boolean) : [];
  calls.forEach((line, i) => {
    const [status, method, url] = line.split(' ');
    answers.push({ what: `curl ${method} ${url}`, method, url, status: Number(status), headers: headersOf(readFileSync(join(out, `${i + 1}.head`), 'utf8')), body: readFileSync(join(out, `${i + 1}.body`)) });
  });
  if (existsSync(join(out, 'fetches.jsonl'))) {
    for (const line of readFileSync(join(out, 'fetches.jsonl'), 'utf8').trim().split('\n')) {
      const f = JSON.parse(line) as { method: string; url: string; status: number; headers: [string, string][]; body: string };
      answers.push({ what: `fetch ${f.method} ${f.url}`, method: f.method, url: f.url, status: f.status, headers: new Headers(f.headers), body: Buffer.from(f.body, 'base64') });
    }
  }
  return answers;
}

/** An answer that finds nothing shows a reader nothing: every count, list and changelog must have something in it. */
function emptiness(json: unknown): string | null {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  const o = json as Record<string, unknown>;
  if (typeof o.count === 'number' && o.count === 0) return 'count 0';
  for (const k of ['results', 'events', 'matches', 'findings', 'providers', 'releases']) if (Array.isArray(o[k]) && (o[k] as unknown[]).length === 0) return `no ${k}`;
  if (o.counts && typeof o.counts === 'object' && 'chain' in o && Object.values(o.counts as Record<string, number>).every((n) => n === 0)) return 'every change count 0';
  if (Array.isArray(o.results)) for (const r of o.results as { status?: number }[]) if (typeof r.status === 'number' && r.status !== 200) return `a batch item answered ${r.status}`;
  return null;
}

async function startSamples(): Promise<{ proc: ChildProcess; key: string }> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin/register.mjs'), 'start', '--access-log', 'off'], {
    cwd: clone,
    env: { ...process.env, PORT: String(ports.samples[0]), REGISTER_CURSOR_SECRET: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const key = await new Promise<string>((res, rej) => {
    let err = '';
    const timer = setTimeout(() => rej(new Error(`register start printed no key:\n${err}`)), 120_000);
    proc.stderr!.on('data', (d: Buffer) => {
      err += d;
      const m = /development key[^\n]*\n(rk_\S+)\n/.exec(err);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    proc.once('exit', (code) => rej(new Error(`register start exited ${code}:\n${err}`)));
  });
  return { proc, key };
}

afterAll(() => {
  samples?.proc.kill('SIGKILL');
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {}
  }
});

describe('the blocks of README.md and docs/', () => {
  it('every shell and TypeScript block is marked: run against a named server, saved as a file, or not run and why', () => {
    const unmarked: string[] = [];
    for (const b of ALL) {
      const where = `${b.doc}:${b.line}`;
      if (!CODE.has(b.lang)) {
        // An untagged block is output or a diagram; a command in one would be run by nobody.
        if (/^(\s*)(npx|npm|curl|node|docker) /m.test(b.text)) unmarked.push(`${where}: a command in a block not tagged sh`);
        continue;
      }
      const m = b.marker;
      if (m === null) unmarked.push(`${where}: no <!-- doc-block: … --> before it`);
      else if (/^not run: \S/.test(m)) continue;
      else if (!new RegExp(`^(run (${WORLDS.join('|')})|file (${WORLDS.join('|')}) \\S+)$`).test(m)) unmarked.push(`${where}: unknown marker "${m}"`);
    }
    expect(unmarked).toEqual([]);
    // The documents this test runs blocks of, so a rename cannot drop them silently.
    const run = new Set(ALL.filter((b) => b.marker?.startsWith('run ')).map((b) => `${b.doc} ${b.marker}`));
    expect([...run].sort()).toEqual(['README.md run real', 'README.md run samples', 'docs/contributions.md run samples', 'docs/explorer.md run samples', 'docs/operations.md run samples', 'docs/reconcile.md run samples']);
  });

  const sessions = new Map<string, Block[]>();
  for (const b of ALL) {
    const m = /^(run|file) (\w+)/.exec(b.marker ?? '');
    if (!m) continue;
    const k = `${b.doc} ${m[2]}`;
    sessions.set(k, [...(sessions.get(k) ?? []), b]);
  }

  for (const [name, blocks] of sessions) {
    const [doc, world] = name.split(' ') as [string, World];
    it.skipIf(world === 'real' && !HAS_V0)(`${doc}: its blocks for the ${world} server run, each call answered 200 with something in it`, async () => {
      makeClone();
      if (ports[world][0] === 0) ports[world] = [await freePort(), await freePort()];
      if (world === 'samples' && samples === null) samples = await startSamples();
      const out = join(work, `out-${doc.replace(/\W/g, '_')}-${world}`);
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, 'failures'), '');
      // Files first: a block that runs one comes after it.
      const files = blocks.filter((b) => b.marker!.startsWith('file '));
      for (const b of files) {
        writeFileSync(join(clone, b.marker!.split(' ')[2]), b.text.replaceAll('8787', String(ports[world][0])));
      }
      if (files.length > 0) {
        // The TypeScript type-checks against the client's types, with the project's compiler options.
        const options = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions;
        writeFileSync(join(clone, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...options, typeRoots: [join(ROOT, 'node_modules/@types')] }, files: files.map((b) => b.marker!.split(' ')[2]) }));
        const tsc = await runToExit(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: clone });
        expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
      }
      const { script, curls } = scriptOf(blocks.filter((b) => b.marker!.startsWith('run ')), world);
      writeFileSync(join(out, 'session.sh'), script);
      const env: NodeJS.ProcessEnv = {
        ...process.env, PATH: `${bin}:${process.env.PATH}`, DOC_ROOT: ROOT, DOC_OUT: out, DOC_PRELOAD: pathToFileURL(join(work, 'record-fetch.mjs')).href, PORT: String(ports[world][0]),
      };
      delete env.REGISTER_CURSOR_SECRET;
      delete env.NODE_OPTIONS;
      if (world === 'samples') env.KEY = samples!.key;
      const bash = spawn('bash', ['--noprofile', '--norc', join(out, 'session.sh')], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      groups.push(bash.pid!);
      let output = '';
      bash.stdout!.on('data', (d: Buffer) => (output += d));
      bash.stderr!.on('data', (d: Buffer) => (output += d));
      const timer = setTimeout(() => bash.kill('SIGKILL'), 150_000);
      // 'exit', not 'close': servers started with `&` hold the pipes open until they are stopped below.
      const code = await new Promise<number | null>((r) => bash.once('exit', r));
      clearTimeout(timer);
      // The servers the blocks started in the background go with their session, as a reader's `kill %1 %2`.
      try {
        process.kill(-bash.pid!, 'SIGKILL');
      } catch {}
      expect(readFileSync(join(out, 'failures'), 'utf8'), output).toBe('');
      expect(code, output).toBe(0);
      const answers = answersOf(out);
      expect(answers.filter((a) => a.what.startsWith('curl'))).toHaveLength(curls);
      expect(answers.length).toBeGreaterThan(0);
      for (const a of answers) {
        const path = new URL(a.url).pathname;
        // A resolve's 409 is data (every candidate), as the typed client returns it; anything else is 200.
        expect(a.status, `${a.what}: ${a.body}`).toBe(a.status === 409 && path.includes('/resolve/') ? 409 : 200);
        validateResponse({ method: a.method, path, status: a.status, headers: a.headers, body: a.body });
        const isJson = a.headers.get('content-type')?.startsWith('application/json');
        if (isJson && path !== '/api/v1/openapi.json') expect(emptiness(JSON.parse(a.body.toString('utf8'))), `${a.what}: ${a.body}`).toBeNull();
      }
    });
  }
});
