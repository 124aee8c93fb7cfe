// The one trust check (docs/integrity.md, "Signatures"), a miniature of TUF's trusted metadata set: it accepts an
// index (index.json's bytes and its .sig), accepts a manifest (a stamp's public/manifest.json, by bytes or sha256,
// and its .sig), applies the one rollback rule, and keeps the high-water mark that rule compares against, persisted
// through a MarkStore so that a restart never goes back. `serve --trust` (Node and edge), `pull --trust` and
// `verify --trust` all check through it. Web-standard only (WebCrypto through common/signing.ts, no Node built-in):
// it runs in workerd too; the drivers that persist the mark are elsewhere (common/trust-mark-file.ts, edge/).
import { SIGNS_INDEX, SIGNS_MANIFEST, verifyBytes, verifyDigest, type SignatureDoc, type TrustedKeys, type VerifyResult } from './signing.ts';

/** Format tag of a persisted mark. */
const MARK_FORMAT = 'identity-register-trust-mark/1';
const ISO_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const STAMP_TEXT = /^\d{8}T\d{6}Z$/;

/** The namespaces an index points with. */
type Pointer = 'v1' | 'next';
const POINTERS: readonly Pointer[] = ['v1', 'next'];

/**
 * What has been accepted, never to be gone back on: the newest index signature's signed_at, and the newest stamp
 * each namespace has pointed at. null: nothing accepted yet.
 */
export interface TrustMark {
  indexSignedAt: string | null;
  v1: string | null;
  next: string | null;
}

export const EMPTY_MARK: TrustMark = { indexSignedAt: null, v1: null, next: null };

/** Where a mark is persisted (a file beside the dist or in --state, a Durable Object, memory). */
export interface MarkStore {
  /** Where it is, for messages (a path, an object's name). */
  readonly where: string;
  /** The mark saved last, or null when none was ever saved here. Rejects when one is there but damaged. */
  load(): Promise<TrustMark | null>;
  /** Persists `mark` atomically: a crash leaves the one saved before or this one, never a part. */
  save(mark: TrustMark): Promise<void>;
}

/** A mark kept in memory only: it lives as long as the process (`--state memory:`, tests). */
export function memoryMarkStore(where = 'memory'): MarkStore {
  let kept: TrustMark | null = null;
  return { where, load: async () => kept, save: async (m) => void (kept = { ...m }) };
}

/**
 * The mark saved in `store`, or null when none was ever saved there. A damaged one rejects, naming the store: it is
 * never read as empty, which would accept older indexes again.
 */
export async function loadMark(store: MarkStore): Promise<TrustMark | null> {
  try {
    return await store.load();
  } catch (e) {
    throw new Error(`${store.where}: ${(e as Error).message}; it is never read as empty (that would accept older indexes again): restore it, or remove it to trust again any validly signed index`);
  }
}

/** The text a store persists for `mark` (one line of JSON and a newline). */
export const encodeMark = (mark: TrustMark): string =>
  `${JSON.stringify({ format: MARK_FORMAT, index_signed_at: mark.indexSignedAt, v1: mark.v1, next: mark.next })}\n`;

/** The mark in `text`; throws saying what is wrong, so a damaged mark is never read as an empty one. */
export function decodeMark(text: string): TrustMark {
  let doc: { format?: unknown; index_signed_at?: unknown; v1?: unknown; next?: unknown };
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`not a trust mark (not JSON: ${text.length} bytes)`);
  }
  if (doc?.format !== MARK_FORMAT) throw new Error(`not a trust mark (format ${JSON.stringify(doc?.format)}, expected ${MARK_FORMAT})`);
  const field = (v: unknown, re: RegExp, name: string): string | null => {
    if (v === null) return null;
    if (typeof v !== 'string' || !re.test(v)) throw new Error(`trust mark field ${name} is ${JSON.stringify(v)}`);
    return v;
  };
  return { indexSignedAt: field(doc.index_signed_at, ISO_SECOND, 'index_signed_at'), v1: field(doc.v1, STAMP_TEXT, 'v1'), next: field(doc.next, STAMP_TEXT, 'next') };
}

const later = (a: string | null, b: string | null | undefined): string | null => (b == null ? a : a === null || b > a ? b : a);

/** The newer of two marks, field by field (ISO instants and stamps both order as text). */
export const raiseMark = (a: TrustMark, b: Partial<TrustMark>): TrustMark => ({
  indexSignedAt: later(a.indexSignedAt, b.indexSignedAt), v1: later(a.v1, b.v1), next: later(a.next, b.next),
});

const sameMark = (a: TrustMark, b: TrustMark): boolean => a.indexSignedAt === b.indexSignedAt && a.v1 === b.v1 && a.next === b.next;

/** What an index shows the rollback rule: its signature's signed_at and, unless pinned, where it points. */
export interface IndexSeen {
  /** Its signature's signed_at (none: only where it points is judged, e.g. an index a pull writes of its own). */
  signedAt?: string;
  /** The pointers served (null: a pinned server, whose pointers are the operator's choice, not the index's). */
  pointers: Record<Pointer, string | null> | null;
}

/** The rule's first half: a signature older than the newest one accepted. Why, or null. */
function signatureBack(mark: TrustMark, signedAt: string | undefined): string | null {
  if (mark.indexSignedAt === null || signedAt === undefined || signedAt >= mark.indexSignedAt) return null;
  return `signed at ${signedAt}, older than ${mark.indexSignedAt} already accepted (rollback refused)`;
}

/** The rule's second half: a namespace pointed at an older stamp than one accepted for it. Why, or null. */
function pointerBack(mark: TrustMark, pointers: IndexSeen['pointers']): string | null {
  for (const ns of POINTERS) {
    const at = pointers?.[ns] ?? null;
    if (at !== null && mark[ns] !== null && at < mark[ns]!) return `names ${at} for ${ns}, older than ${mark[ns]} already accepted (rollback refused)`;
  }
  return null;
}

/**
 * THE rollback rule: an index is a rollback when its signature is older than the newest one accepted, or when it
 * points a namespace at an older stamp than one accepted for it. Why, in words, or null when it is not.
 */
export function rollbackOf(mark: TrustMark, seen: IndexSeen): string | null {
  return signatureBack(mark, seen.signedAt) ?? pointerBack(mark, seen.pointers);
}

/** An index refused by the rollback rule for where it points (its signature itself was good). */
export type IndexVerdict = VerifyResult | { ok: false; reason: 'rollback'; message: string; detail: string; pointer: true };

export interface TrustedSetOptions {
  trusted: TrustedKeys;
  /** Where the mark persists. Default: memory (this process only). */
  store?: MarkStore;
  /**
   * Marks shown by what the caller holds (a dist's own signed stamps, a pull's kept origin signature): the mark
   * starts at the newer of these and the stored one, so evidence on disk is never gone back on either.
   */
  evidence?: Partial<TrustMark>;
  /** Load only: accepting raises the mark in memory and saves nothing (`register verify`). */
  readOnly?: boolean;
}

/** Accepts indexes and manifests by the trusted keys, and keeps the rollback mark. */
export class TrustedSet {
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    readonly trusted: TrustedKeys,
    private current: TrustMark,
    private readonly store: MarkStore,
    private readonly readOnly: boolean,
  ) {}

  /** Opens the set over its store's mark. Rejects, naming the store, when the mark there is damaged. */
  static async open(opts: TrustedSetOptions): Promise<TrustedSet> {
    const store = opts.store ?? memoryMarkStore();
    const stored = await loadMark(store);
    return new TrustedSet(opts.trusted, raiseMark(stored ?? EMPTY_MARK, opts.evidence ?? {}), store, opts.readOnly === true);
  }

  /** The mark now (a copy). */
  get mark(): TrustMark {
    return { ...this.current };
  }

  /** Where the mark persists. */
  get where(): string {
    return this.store.where;
  }

  /**
   * Checks an index: its signature (`sigText`, null when absent) over `signedBytes` by a trusted key, naming the
   * signed index's newest stamp, unexpired at `now`, and the rollback rule against the mark. Accepts nothing:
   * `accept` raises the mark once the caller has put the index to use.
   */
  async checkIndex(sigText: string | null, signedBytes: Uint8Array | string, o: { stamp: string | null; pointers: IndexSeen['pointers']; now: Date }): Promise<IndexVerdict> {
    const v = await verifyBytes(sigText, signedBytes, { signs: SIGNS_INDEX, stamp: o.stamp ?? undefined, trusted: this.trusted, now: o.now });
    if (!v.ok) return v;
    const signed = signatureBack(this.current, v.doc.signed_at);
    if (signed !== null) return { ok: false, reason: 'rollback', message: `${SIGNS_INDEX}.sig: ${signed}`, detail: signed };
    const pointed = pointerBack(this.current, o.pointers);
    return pointed === null ? v : { ok: false, reason: 'rollback', message: `${SIGNS_INDEX}: ${pointed}`, detail: pointed, pointer: true };
  }

  /** The rollback rule for where an unsigned index points (a partial copy's own): why it goes back, or null. */
  pointersBack(pointers: NonNullable<IndexSeen['pointers']>): string | null {
    return pointerBack(this.current, pointers);
  }

  /** Checks a stamp's public manifest signature, over its bytes or their sha256 (hex), unexpired at `now`. */
  checkManifest(sigText: string | null, manifest: { bytes: Uint8Array | string } | { sha256: string }, stamp: string, now: Date): Promise<VerifyResult> {
    const opts = { signs: SIGNS_MANIFEST, stamp, trusted: this.trusted, now };
    return 'sha256' in manifest ? verifyDigest(sigText, manifest.sha256, opts) : verifyBytes(sigText, manifest.bytes, opts);
  }

  /**
   * Raises the mark by an index put to use (its signature, and where it points unless pinned) and persists it.
   * Saves run one at a time, in order; rejects when the store cannot save (the caller then does not use the index).
   */
  accept(doc: SignatureDoc, pointers: IndexSeen['pointers']): Promise<void> {
    const next = raiseMark(this.current, { indexSignedAt: doc.signed_at, ...(pointers ?? {}) });
    if (sameMark(next, this.current)) return this.saving;
    this.current = next;
    if (this.readOnly) return Promise.resolve();
    this.saving = this.saving.catch(() => {}).then(() => this.store.save(next));
    return this.saving;
  }
}
