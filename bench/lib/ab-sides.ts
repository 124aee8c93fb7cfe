// What the A/B scripts of two checkouts' runtimes share (bench/ab-serve.ts over HTTP, bench/answer-cpu.ts in
// process): their command line (the two checkouts, one compiled dist and the release it was compiled from) and the
// requests of the three rows the read path decides: entity with includes, resolve, and a 100-item batch. Two
// checkouts whose dist formats differ each serve a dist compiled by their own compiler from the same release
// (`--dist-a`, `--dist-b`); otherwise one `--dist` serves both.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadRequest } from './load-generator.ts';
import { prng, sampleKeys, searchQuery } from './sample-keys.ts';
import { ENTITY_INCLUDE } from './serve-measure.ts';

export const AB_ROWS = ['entity', 'resolve', 'batch'] as const;
export type AbRow = (typeof AB_ROWS)[number];

/** `--a ROOT --b ROOT (--dist DIST | --dist-a DIST --dist-b DIST) --releases RELEASE_DIR` and the script's own numeric options with their defaults. */
export function abCommandLine<K extends string>(script: string, own: Record<K, string>): { roots: { A: string; B: string }; dists: { A: string; B: string }; sides: { A?: string; B?: string }; nodeFlags: { A: string[]; B: string[] }; described: { A: string; B: string }; releases: string; own: Record<K, number> } {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      dist: { type: 'string' },
      'dist-a': { type: 'string' },
      'dist-b': { type: 'string' },
      // What sets one side apart besides its checkout, for a feature's cost on one checkout (each script reads it).
      'side-a': { type: 'string' },
      'side-b': { type: 'string' },
      // Node's own flags for one side's process (`--max-semi-space-size=32`), before the script.
      'node-a': { type: 'string' },
      'node-b': { type: 'string' },
      releases: { type: 'string' },
      ...Object.fromEntries(Object.entries(own).map(([k, v]) => [k, { type: 'string' as const, default: v as string }])),
    },
  });
  const v = values as Record<string, string | undefined>;
  const distA = v['dist-a'] ?? v.dist;
  const distB = v['dist-b'] ?? v.dist;
  if (!v.a || !v.b || !distA || !distB || !v.releases) {
    throw new Error(`usage: ${script} --a ROOT --b ROOT (--dist DIST | --dist-a DIST --dist-b DIST) --releases RELEASE_DIR ${Object.entries(own).map(([k, d]) => `[--${k} ${d}]`).join(' ')}`);
  }
  const numbers = Object.fromEntries(Object.keys(own).map((k) => [k, Number(v[k])])) as Record<K, number>;
  const roots = { A: resolve(v.a), B: resolve(v.b) };
  const dists = { A: resolve(distA), B: resolve(distB) };
  const sides = { A: v['side-a'], B: v['side-b'] };
  const nodeFlags = { A: v['node-a']?.split(' ').filter(Boolean) ?? [], B: v['node-b']?.split(' ').filter(Boolean) ?? [] };
  // Each side as the scripts' report headers name it: its checkout, its own arguments, and its dist where they differ.
  const describe = (side: 'A' | 'B') => `${nodeFlags[side].length ? `node ${nodeFlags[side].join(' ')} ` : ''}${roots[side]}${sides[side] ? ` ${sides[side]}` : ''}${dists.A === dists.B ? '' : ` on ${dists[side]}`}`;
  return { roots, dists, sides, nodeFlags, described: { A: describe('A'), B: describe('B') }, releases: resolve(v.releases), own: numbers };
}

/**
 * Each row's requests over `samples` keys of the release: paths under /api/v1, batch bodies of 100 entity items,
 * and a search row as bench/run.ts loads it (one or two words of each sampled entity's label), which only
 * ab-serve loads, when asked.
 */
export async function abRequests(releases: string, samples: number): Promise<Record<AbRow | 'search', LoadRequest[]>> {
  const keys = await sampleKeys(releases, samples, 1);
  const random = prng(1);
  const words = prng(1);
  const get = (paths: string[]): LoadRequest[] => paths.map((path) => ({ method: 'GET', path }));
  return {
    search: get(keys.entities.map((e) => searchQuery(e.label, words)).filter((q): q is string => q !== null).map((q) => `/api/v1/search?q=${encodeURIComponent(q)}`)),
    entity: get(keys.entities.map((e) => `/api/v1/entities/${e.id}?include=${ENTITY_INCLUDE}`)),
    resolve: get(keys.bridges.map((b) => `/api/v1/resolve/${encodeURIComponent(b.provider)}/${encodeURIComponent(b.externalId)}?namespace=${encodeURIComponent(b.namespace)}`)),
    batch: Array.from({ length: 200 }, () => ({
      method: 'POST' as const,
      path: '/api/v1/batch',
      body: Buffer.from(JSON.stringify({ include: ENTITY_INCLUDE, requests: Array.from({ length: 100 }, () => ({ type: 'entity', id: keys.entities[Math.floor(random() * keys.entities.length)].id })) })),
    })),
  };
}

/** The middle value, or the mean of the two middle values of an even count. */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
