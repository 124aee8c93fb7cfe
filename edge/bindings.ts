// What the Worker is bound to (edge/wrangler.ts writes the same names into wrangler.toml; edge dev gives them to
// miniflare): the public dist's bucket (or the URL of a static host holding it), the private one, the Durable Object namespaces and the two secrets.
import type { R2BucketLike } from '../runtime/source/r2-source.ts';

/** A Durable Object's RPC stub: each public method of the class, answered as a promise. */
type Stub<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never };

/** A Durable Object namespace, as much of it as the Worker uses: the object for a name, and its RPC stub. */
interface Namespace<T> {
  idFromName(name: string): unknown;
  get(id: unknown): Stub<T>;
}

export const BINDINGS = {
  /** R2: the public dist (index.json, each stamp's public tree). */
  dist: 'DIST',
  /**
   * Var: the URL of a static host (a CDN, a mirror, any server of files with Range requests) holding the public
   * dist. When set, the Worker reads the dist from there, over fetch, instead of from the R2 bucket DIST.
   */
  distOrigin: 'DIST_ORIGIN',
  /** R2: the private part (each stamp's private/ tree: its manifest and provider notices). Never public. */
  private: 'PRIVATE',
  /** Durable Object class per API key: its record, rate window and quota. */
  keys: 'KEYS',
  /** Durable Object class per provider: its notices' seen and acknowledged state. */
  providers: 'PROVIDERS',
  /** Durable Object that lists the keys for the admin route (never on a request's path). */
  directory: 'DIRECTORY',
  /** Secret: signs /matches cursors (at least 32 characters). */
  cursorSecret: 'CURSOR_SECRET',
  /** Secret: the bearer token of the admin route (at least 32 characters). */
  adminToken: 'ADMIN_TOKEN',
  /** Var: trusted signing keys (`ed25519:…`, comma-separated); when set, only signed releases are served (`serve --trust`). */
  trust: 'TRUST',
  /** Durable Object holding the rollback mark of TRUST (TrustMarkObject; edge/trust-mark.ts reads and raises it). */
  trustMark: 'TRUST_MARK',
} as const;

/** The Durable Object classes the bundle exports, by binding (wrangler.toml's [[durable_objects.bindings]]). */
export const DURABLE_CLASSES = { KEYS: 'KeyObject', PROVIDERS: 'ProviderObject', DIRECTORY: 'KeyDirectory', TRUST_MARK: 'TrustMarkObject' } as const;

export interface EdgeEnv {
  DIST?: R2BucketLike;
  DIST_ORIGIN?: string;
  PRIVATE?: R2BucketLike;
  KEYS: Namespace<import('./durable-objects.ts').KeyObject>;
  PROVIDERS: Namespace<import('./durable-objects.ts').ProviderObject>;
  DIRECTORY: Namespace<import('./durable-objects.ts').KeyDirectory>;
  CURSOR_SECRET?: string;
  ADMIN_TOKEN?: string;
  TRUST?: string;
  TRUST_MARK?: Namespace<import('./durable-objects.ts').TrustMarkObject>;
}
