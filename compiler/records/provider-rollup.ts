// What stage 2 hands the documents stage for /providers and /coverage: per provider, the bridges, overlay IDs and
// bridged entities by type, counted in each range and added up.
import { ownCopy } from '../../common/own-copy.ts';

/** One provider's rollup: bridges, overlay IDs, and bridged entities by type. */
export interface Rollup {
  bridges: number;
  overlay: number;
  types: Map<string, number>;
}

/** A ProviderRollup as plain data, to cross from a worker thread. */
export type RollupPart = [string, { bridges: number; overlay: number; types: [string, number][] }][];

/** Counts, per provider, what stage 2 builds: in one range (`bridges`, `overlay`) or over all of them (`add`). */
export class ProviderRollup {
  readonly byProvider = new Map<string, Rollup>();

  private of(provider: string): Rollup {
    let r = this.byProvider.get(provider);
    // The provider as a string of its own: a slice would keep the partition's whole text alive.
    if (!r) this.byProvider.set(ownCopy(provider), (r = { bridges: 0, overlay: 0, types: new Map() }));
    return r;
  }

  /** A live entity of `type` and its bridges (each bridge's provider first). */
  bridges(type: string, bridges: readonly (readonly [string, ...string[]])[]): void {
    for (const [provider] of bridges) {
      const r = this.of(provider);
      r.bridges++;
      r.types.set(type, (r.types.get(type) ?? 0) + 1);
    }
  }

  /** A live entity's overlay IDs. */
  overlay(ids: readonly { provider: string }[]): void {
    for (const x of ids) this.of(x.provider).overlay++;
  }

  part(): RollupPart {
    return [...this.byProvider].map(([k, r]) => [k, { bridges: r.bridges, overlay: r.overlay, types: [...r.types] }]);
  }

  /** Adds a range's part. */
  add(part: RollupPart): void {
    for (const [name, r] of part) {
      const into = this.of(name);
      into.bridges += r.bridges;
      into.overlay += r.overlay;
      for (const [t, n] of r.types) into.types.set(t, (into.types.get(t) ?? 0) + n);
    }
  }
}
