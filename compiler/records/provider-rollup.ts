// What stage 2 hands the documents stage for /providers and /coverage: per provider, the bridges, overlay IDs and
// bridged entities by type, and the namespaces its bridges use per entity type, counted in each range and added up.
import { ownCopy } from '../../common/own-copy.ts';

/** One provider's rollup: bridges, overlay IDs, and bridged entities by type. */
export interface Rollup {
  bridges: number;
  overlay: number;
  types: Map<string, number>;
  /** Bridges per entity type and namespace (`type\u0000namespace`), for release.json's ProviderInfo.namespaces. */
  namespaces: Map<string, number>;
}

/** A ProviderRollup as plain data, to cross from a worker thread. */
export type RollupPart = [string, { bridges: number; overlay: number; types: [string, number][]; namespaces: [string, number][] }][];

/** Counts, per provider, what stage 2 builds: in one range (`bridges`, `overlay`) or over all of them (`add`). */
export class ProviderRollup {
  readonly byProvider = new Map<string, Rollup>();

  private of(provider: string): Rollup {
    let r = this.byProvider.get(provider);
    // The provider as a string of its own: a slice would keep the partition's whole text alive.
    if (!r) this.byProvider.set(ownCopy(provider), (r = { bridges: 0, overlay: 0, types: new Map(), namespaces: new Map() }));
    return r;
  }

  /** A live entity of `type` and its bridges (each bridge's provider, then its namespace). */
  bridges(type: string, bridges: readonly (readonly [string, string, ...string[]])[]): void {
    for (const [provider, namespace] of bridges) {
      const r = this.of(provider);
      r.bridges++;
      r.types.set(type, (r.types.get(type) ?? 0) + 1);
      const k = `${type}\u0000${namespace}`;
      r.namespaces.set(k, (r.namespaces.get(k) ?? 0) + 1);
    }
  }

  /** A live entity's overlay IDs. */
  overlay(ids: readonly { provider: string }[]): void {
    for (const x of ids) this.of(x.provider).overlay++;
  }

  part(): RollupPart {
    return [...this.byProvider].map(([k, r]) => [k, { bridges: r.bridges, overlay: r.overlay, types: [...r.types], namespaces: [...r.namespaces] }]);
  }

  /** Adds a range's part. */
  add(part: RollupPart): void {
    for (const [name, r] of part) {
      const into = this.of(name);
      into.bridges += r.bridges;
      into.overlay += r.overlay;
      for (const [t, n] of r.types) into.types.set(t, (into.types.get(t) ?? 0) + n);
      for (const [k, n] of r.namespaces) into.namespaces.set(k, (into.namespaces.get(k) ?? 0) + n);
    }
  }
}

/**
 * The namespaces a provider's bridges use, per entity type, most used first (ties by name): how a contribution row
 * that names no namespace is looked up (runtime/contributions/). Learned from the release, never a table of ours.
 */
export function namespacesByType(r: Rollup): Record<string, string[]> {
  const byType = new Map<string, [string, number][]>();
  for (const [k, n] of r.namespaces) {
    const cut = k.indexOf('\u0000');
    const type = k.slice(0, cut);
    let list = byType.get(type);
    if (!list) byType.set(type, (list = []));
    list.push([k.slice(cut + 1), n]);
  }
  const out: Record<string, string[]> = {};
  for (const type of [...byType.keys()].sort()) out[type] = byType.get(type)!.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([ns]) => ns);
  return out;
}
