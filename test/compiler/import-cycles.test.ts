// The compiler's modules import one another without a cycle (type-only imports included), so each stage can be read
// from the formats and helpers it builds on; and the compiler never imports the release generator.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Each file's relative imports (static, type-only, re-exports and dynamic), as absolute paths. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph.set(file, importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name)));
  }
  return graph;
}

/** One cycle among the graph's nodes (as a path that returns to its start), or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done' || !graph.has(node)) return null;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node)!) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe('compiler imports', () => {
  it('finds a cycle when there is one (the check itself)', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]);
    expect(findCycle(g)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']], ['b', []]]))).toBeNull();
  });

  it('has no import cycle under compiler/', () => {
    const graph = importGraph(tsFiles(join(ROOT, 'compiler')));
    expect(graph.size).toBeGreaterThan(30);
    const cycle = findCycle(graph);
    expect(cycle?.map((f) => relative(ROOT, f)) ?? null).toBeNull();
  });

  it('never imports the generator', () => {
    const generator = join(ROOT, 'generator') + '/';
    const into = [...importGraph(tsFiles(join(ROOT, 'compiler')))].flatMap(([file, deps]) => deps.filter((d) => d.startsWith(generator)).map((d) => `${relative(ROOT, file)} → ${relative(ROOT, d)}`));
    expect(into).toEqual([]);
  });
});

// The same rule for the server, the edge, the mirrors, the CLI, the client and the explorer: their modules and the
// imports among them form no cycle (type-only and dynamic imports included: a lazy import still ties two modules
// together).
describe('runtime, edge, mirror, cli, client and explorer imports', () => {
  it('has no import cycle under runtime/, edge/, mirror/, cli/, client/ or explorer/', () => {
    const files = ['runtime', 'edge', 'mirror', 'cli', 'client', 'explorer'].flatMap((dir) => tsFiles(join(ROOT, dir)));
    const graph = importGraph(files);
    expect(graph.size).toBeGreaterThan(80);
    const cycles: string[][] = [];
    // Every cycle, one per start, so a failure lists them all rather than the first.
    for (let guard = 0; guard < 50; guard++) {
      const cycle = findCycle(graph);
      if (!cycle) break;
      cycles.push(cycle.map((f) => relative(ROOT, f)));
      const [from, to] = cycle;
      graph.set(from, graph.get(from)!.filter((d) => d !== to));
    }
    expect(cycles).toEqual([]);
  });

  // The edge and the mirrors are adapters of the one app: they build on the runtime, and nothing of the runtime,
  // the compiler, the client or the explorer builds on them (the CLI alone reaches them, to run their commands).
  it('has no module under runtime/, common/, compiler/, client/ or explorer/ import edge/ or mirror/', () => {
    const rel = (f: string) => relative(ROOT, f);
    const graph = importGraph(['runtime', 'common', 'compiler', 'client', 'explorer'].flatMap((dir) => tsFiles(join(ROOT, dir))));
    const wrong = [...graph].flatMap(([f, deps]) => deps.filter((d) => /^(edge|mirror)\//.test(rel(d))).map((d) => `${rel(f)} → ${rel(d)}`));
    expect(wrong).toEqual([]);
  });

  // The contract is what the document, the request checks and the client follow from: it states the API without
  // knowing the server that answers it. Its one import from the runtime is the Error body it refuses requests with
  // (runtime/api-error.ts, which imports nothing of the runtime itself).
  it('has runtime/contract/ import only common/, TypeBox and the Error body', () => {
    const rel = (f: string) => relative(ROOT, f);
    const contract = tsFiles(join(ROOT, 'runtime/contract'));
    const graph = importGraph(contract);
    const wrong = [...graph].flatMap(([f, deps]) =>
      deps.filter((d) => !rel(d).startsWith('runtime/contract/') && !rel(d).startsWith('common/') && rel(d) !== 'runtime/api-error.ts').map((d) => `${rel(f)} → ${rel(d)}`),
    );
    expect(wrong).toEqual([]);
    const packages = contract.flatMap((f) => ts.preProcessFile(readFileSync(f, 'utf8'), true, true).importedFiles.map((i) => i.fileName).filter((n) => !n.startsWith('.')));
    expect([...new Set(packages.map((n) => n.split('/')[0] + (n.startsWith('@') ? `/${n.split('/')[1]}` : '')))]).toEqual(['@sinclair/typebox']);
    const errorBody = importGraph([join(ROOT, 'runtime/api-error.ts')]).get(join(ROOT, 'runtime/api-error.ts'))!;
    expect(errorBody.filter((d) => !rel(d).startsWith('runtime/contract/') && !rel(d).startsWith('common/'))).toEqual([]);
  });
});

describe('compiler, common and generator imports', () => {
  const folders = ['compiler', 'common', 'generator'];
  const graph = importGraph(folders.flatMap((f) => tsFiles(join(ROOT, f))));
  const rel = (f: string) => relative(ROOT, f);

  it('has no import cycle under compiler/, common/ and generator/ together', () => {
    expect(graph.size).toBeGreaterThan(60);
    expect(findCycle(graph)?.map(rel) ?? null).toBeNull();
  });

  it('keeps common/ free of the compiler and the generator', () => {
    const out = [...graph].filter(([f]) => rel(f).startsWith('common/')).flatMap(([f, deps]) => deps.filter((d) => !rel(d).startsWith('common/')).map((d) => `${rel(f)} → ${rel(d)}`));
    expect(out).toEqual([]);
  });

  // What one stage hands another lives in compiler/records/: records import no stage, and a stage (a file or a
  // folder directly under compiler/stages/) imports no other stage, so each reads only the records before it.
  it('has records/ import no stage, and no stage import another', () => {
    const stages = 'compiler/stages/';
    const stageOf = (f: string) => (rel(f).startsWith(stages) ? rel(f).slice(stages.length).split('/')[0] : null);
    const wrong = [...graph].flatMap(([f, deps]) =>
      deps
        .filter((d) => stageOf(d) !== null && (rel(f).startsWith('compiler/records/') || (stageOf(f) !== null && stageOf(f) !== stageOf(d))))
        .map((d) => `${rel(f)} → ${rel(d)}`),
    );
    expect(wrong).toEqual([]);
  });
});
