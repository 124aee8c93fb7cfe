// Which compiled release each namespace serves: dist/index.json, re-read at most once a second so a newly
// compiled stamp is picked up without a restart. Opened releases are kept, since older stamps stay addressable.
// index.json is the root of the chain of trust (docs/integrity.md): its seal is checked whenever its text changes,
// and each stamp is opened only if its public manifest hashes to what the index records.
import { INDEX_FILE, ORIGIN_INDEX_FILE, type DistIndex, type IndexedRelease, INDEX_SIG_FILE, manifestSigPath, ORIGIN_INDEX_SIG_FILE } from '../../common/dist-layout.ts';
import { openIndex } from '../../common/index-file.ts';
import type { Namespace } from '../../common/ids.ts';
import type { Clock, MaybePromise, ShardSource } from '../interfaces.ts';
import { stderrProblemLog, type ProblemLog } from '../problem-log.ts';
import { ArtefactError, fileOf, readFailure, UntrustedError, UpstreamError } from '../read-errors.ts';
import { loadRelease, releaseMemos, type Release, type ReleaseMemos } from './open-release.ts';
import { createBucketCache, type BucketCache } from './bucket-family-reader.ts';
import { ShardCache } from './shard-cache.ts';
import { defaultCacheShares, type CacheShares } from './cache-budget.ts';
import type { SignatureDoc, TrustedKeys } from '../../common/signing.ts';
import { TrustedSet, type IndexVerdict, type MarkStore } from '../../common/trust.ts';
import { BodyCache } from './body-cache.ts';

/** Options of a ReleaseCatalog. */
export interface CatalogOptions {
  source: ShardSource;
  clock: Clock;
  /** How often dist/index.json is re-read, in ms (default 1000). */
  refreshMs?: number;
  /**
   * What each cache may hold across releases, in bytes (cache-budget.ts; default: the default budget divided by its
   * rule). The pages' share is for the /matches route, which keeps them.
   */
  caches?: CacheShares;
  /** Where a damaged index.json or a stamp that cannot be opened is reported, once per distinct reason (default: stderr). */
  log?: ProblemLog;
  /** Serve this stamp on both namespaces, whatever index.json points at (previewing a release); it must be listed. */
  pin?: string;
  /**
   * Keys whose signatures are trusted (`serve --trust`): when set, index.json and every stamp served must carry a
   * valid, unexpired signature from one of them (docs/integrity.md, "Signatures"), checked against `clock`. A
   * promise (keys parsed from the edge's TRUST var) is awaited on the first re-read; a rejection answers 503.
   */
  trust?: TrustedKeys | Promise<TrustedKeys>;
  /**
   * With trust: where the rollback mark persists, so a restart never goes back to an older index (common/trust.ts).
   * Default: memory, this catalog's lifetime only.
   */
  trustMarks?: MarkStore;
}

/** Why a file the catalog needs cannot be used. */
type ReadFailure = ArtefactError | UpstreamError;

export class ReleaseCatalog {
  private index: DistIndex | null = null;
  private indexText = '';
  /** Why the index cannot be read while no earlier one was: requests answer it (503) instead of "nothing compiled". */
  private indexFailure: ReadFailure | null = null;
  private checkedAt = -Infinity;
  private refreshing: Promise<void> | null = null;
  /**
   * Opening or opened releases by releaseKey (stamp and public manifest sha256): a stamp compiled again is another
   * release, opened beside the one the current index still serves until the new index is switched to.
   */
  private readonly releases = new Map<string, Promise<Release>>();
  /** releaseKey of what each namespace of the current index serves. */
  private servedKeys: Record<Namespace, string | null> = { v1: null, next: null };
  /**
   * What forNamespace answers at once per namespace: the opened release itself, so the request path makes no lookup
   * by key (hashing a stamp-and-sha256 key per request cost ~8% of a cached entity answer's instructions, measured);
   * undefined while it is still opening.
   */
  private servedNow: Record<Namespace, Release | null | undefined> = { v1: undefined, next: undefined };
  /** Releases (releaseKey) that failed to open, answered as they are until the next re-read of the index rather than re-read per request. */
  private readonly failed = new Map<string, ReadFailure>();
  private readonly logged = new Set<string>();
  /** With trust: the accepted index's signature text and document (its signed_at is the rollback high-water mark). */
  private indexSigText: string | null = null;
  private indexSig: SignatureDoc | null = null;
  /** With trust: the one trust check and its rollback mark (common/trust.ts), opened on the first re-read. */
  private trustSet: Promise<TrustedSet> | null = null;
  /** With trust: the verified signature of each opened release (by releaseKey), whose valid_until is watched. */
  private readonly stampSigs = new Map<string, SignatureDoc>();
  private readonly log: ProblemLog;
  readonly cache: BucketCache;
  readonly shards: ShardCache;
  readonly bodies: BodyCache;
  /** The releases' memos, each bounded across all releases opened. */
  readonly memos: ReleaseMemos;

  constructor(private readonly opts: CatalogOptions) {
    const shares = opts.caches ?? defaultCacheShares();
    this.cache = createBucketCache(shares.buckets);
    this.shards = new ShardCache(shares.shards);
    this.bodies = new BodyCache(shares.answers);
    this.memos = releaseMemos(shares);
    this.log = opts.log ?? stderrProblemLog;
  }

  /** Bytes each of the catalog's caches holds, as counted against its share (every cache but the /matches pages). */
  cacheUsage(): Omit<CacheShares, 'pages'> {
    return {
      buckets: this.cache.weight,
      answers: this.bodies.accountedBytes,
      shards: this.shards.accountedBytes,
      recentIds: this.memos.recentIds.bytes,
      matchReferences: this.memos.matchReferences.bytes,
      matchLists: this.memos.matchLists.bytes,
    };
  }

  /** The current index (null when nothing is compiled). Throws why, when index.json exists but cannot be used. */
  async current(): Promise<DistIndex | null> {
    const now = this.opts.clock.now();
    // Before any answer from what is held: a signature that expired since the last re-read stops it now.
    if (this.opts.trust) this.expireSigned(now);
    if (now - this.checkedAt >= (this.opts.refreshMs ?? 1000)) {
      this.refreshing ??= this.refresh(now).finally(() => (this.refreshing = null));
    }
    // Until the first index is read, every request waits for it (later refreshes run in the background).
    if (!this.index && this.refreshing) await this.refreshing;
    if (!this.index && this.indexFailure) throw this.indexFailure;
    return this.index;
  }

  private async refresh(now: number): Promise<void> {
    this.checkedAt = now;
    this.failed.clear();
    const file = fileOf(this.opts.source, INDEX_FILE);
    let bytes: Uint8Array | null;
    try {
      bytes = await this.opts.source.readFile(INDEX_FILE);
    } catch (err) {
      return this.indexUnusable(readFailure(err, file));
    }
    if (!bytes) {
      // Nothing compiled yet, or the pointer was deleted: keep serving what we had (its stamps are immutable).
      if (this.index) this.logOnce('index-missing', `[serve] ${file}: not found; still serving ${this.index.v1 ?? '-'} (v1) and ${this.index.next ?? '-'} (next)`, file, 'not found');
      return;
    }
    const text = new TextDecoder().decode(bytes);
    const trust = this.opts.trust;
    let sigText: string | null = null;
    /** With trust and no index.json.sig: the origin's signed index kept beside a partial copy, and its signature. */
    let origin: { bytes: Uint8Array; text: string; sigText: string | null } | null = null;
    if (trust) {
      // Re-read each time: a re-signed index (a later valid_until) changes index.json.sig and not index.json.
      let reading = INDEX_SIG_FILE;
      try {
        const sig = await this.opts.source.readFile(INDEX_SIG_FILE);
        sigText = sig && new TextDecoder().decode(sig);
        if (sigText === null) {
          reading = ORIGIN_INDEX_FILE;
          const bytes = await this.opts.source.readFile(ORIGIN_INDEX_FILE);
          reading = ORIGIN_INDEX_SIG_FILE;
          const originSig = bytes && (await this.opts.source.readFile(ORIGIN_INDEX_SIG_FILE));
          if (bytes) origin = { bytes, text: new TextDecoder().decode(bytes), sigText: originSig && new TextDecoder().decode(originSig) };
        }
      } catch (err) {
        return this.indexUnusable(readFailure(err, fileOf(this.opts.source, reading)));
      }
      this.expireSigned(now);
    }
    // What vouches for the index, compared to skip checking again what was already accepted.
    const voucher = origin ? `${ORIGIN_INDEX_FILE}\n${origin.text}\n${origin.sigText}` : sigText;
    if (text === this.indexText && (!trust || (voucher === this.indexSigText && this.index))) return;
    let parsed: DistIndex;
    try {
      parsed = openIndex(text);
    } catch (err) {
      return this.indexUnusable(new ArtefactError(file, (err as Error).message));
    }
    let sigDoc: SignatureDoc | null = null;
    let set: TrustedSet | null = null;
    // Where the index points, for the rollback rule; a pinned server's pointers are the operator's, not the index's.
    const pointers = this.opts.pin === undefined ? { v1: parsed.v1, next: parsed.next } : null;
    if (trust) {
      try {
        set = await this.trusted(trust);
      } catch (err) {
        return this.indexUnusable(new UntrustedError(this.opts.trustMarks?.where ?? 'trust mark', (err as Error).message));
      }
      // The clock now, not when this re-read began: a re-read still under way when a signature expires must not
      // bring back what expireSigned has just dropped.
      const checked = origin ? await this.checkOriginBacked(set, parsed, origin, pointers) : null;
      if (checked instanceof UntrustedError) return this.indexUnusable(checked);
      const verdict = checked ?? (await set.checkIndex(sigText, bytes, { stamp: parsed.next, pointers, now: new Date(this.opts.clock.now()) }));
      // Fetched mid-publish (index.json and its signature from two moments), refused: the next re-read tries again.
      if (!verdict.ok) return this.indexUnusable(new UntrustedError(fileOf(this.opts.source, 'pointer' in verdict ? INDEX_FILE : INDEX_SIG_FILE), verdict.detail));
      sigDoc = verdict.doc;
    }
    const pin = this.opts.pin;
    if (pin !== undefined) {
      if (!parsed.releases.some((r) => r.stamp === pin)) return this.indexUnusable(new ArtefactError(file, `lists no release ${pin}, which --stamp pins`));
      parsed = { ...parsed, v1: pin, next: pin };
    }
    // Open the new stamps before switching, so the first request after a publish does not pay for it, and a stamp
    // that cannot be opened is never switched to while an earlier index serves.
    const stamps = [...new Set([parsed.v1, parsed.next].filter((s): s is string => !!s))];
    const opens = await Promise.allSettled(stamps.map((s) => this.release(s, parsed)));
    const openedNow = new Map(opens.flatMap((o, i) => (o.status === 'fulfilled' ? [[stamps[i], o.value] as const] : [])));
    const problems = opens.flatMap((o, i) => (o.status === 'rejected' ? [[stamps[i], o.reason] as const] : []));
    for (const [stamp, reason] of problems) this.logStampProblem(stamp, reason as Error);
    // A first index is taken even with a broken stamp: the namespace it serves answers 503 naming no file, the other
    // is served. A later one only when every stamp it names opened.
    if (this.index && problems.length) return;
    // The mark is saved before the index is served: a restart after this never goes back to an older one.
    if (set) {
      try {
        await set.accept(sigDoc!, pointers);
      } catch (err) {
        return this.indexUnusable(new UntrustedError(set.where, `cannot save the trust mark (${(err as Error).message}), so this index is not served`));
      }
    }
    this.index = parsed;
    this.indexText = text;
    this.indexFailure = null;
    if (trust) {
      this.indexSigText = voucher;
      this.indexSig = sigDoc;
    }
    this.servedKeys = { v1: keyIn(parsed, parsed.v1), next: keyIn(parsed, parsed.next) };
    const opened = (stamp: string | null) => (stamp === null ? null : openedNow.get(stamp));
    this.servedNow = { v1: opened(parsed.v1), next: opened(parsed.next) };
    // Releases the new index does not list as they were opened (a stamp compiled again) are let go.
    const listed = new Set(parsed.releases.map((r) => releaseKey(r.stamp, r.sha256.public)));
    for (const k of [...this.releases.keys()]) if (!listed.has(k)) this.releases.delete(k);
  }

  /**
   * With trust, nothing is served past its signature's valid_until: an expired index is dropped (every namespace
   * answers 503 until a re-signed one is read), an expired stamp is closed, to be opened again (and its signature
   * read again, perhaps re-signed) on its next request.
   */
  private expireSigned(now: number): void {
    if (this.indexSig && now > Date.parse(this.indexSig.valid_until)) {
      const file = fileOf(this.opts.source, INDEX_SIG_FILE);
      const check = `expired at ${this.indexSig.valid_until} (re-sign with \`register sign\`)`;
      this.logOnce(`index ${check}`, `[serve] ${file}: ${check}; nothing served until it is re-signed`, file, check);
      this.index = null;
      this.indexText = '';
      this.indexSig = null;
      this.indexSigText = null;
      this.indexFailure = new UntrustedError(file, check);
      this.servedNow = { v1: undefined, next: undefined };
    }
    for (const [key, doc] of this.stampSigs) {
      if (now <= Date.parse(doc.valid_until)) continue;
      this.stampSigs.delete(key);
      this.releases.delete(key);
      for (const ns of ['v1', 'next'] as const) if (this.servedKeys[ns] === key) this.servedNow[ns] = undefined;
    }
  }

  /**
   * With trust, an index.json signed by no one (a copy holding some of the origin's stamps, `register pull --stamp`)
   * is taken only as a part of the origin's signed index kept beside it: that signature valid, trusted, unexpired and
   * not older than one accepted, and every entry the local index lists the origin's own, same stamp, same manifest
   * sha256, same flags. Its pointers then name only stamps the origin signed. The verdict, or why it is refused.
   */
  private async checkOriginBacked(
    set: TrustedSet, local: DistIndex, origin: { bytes: Uint8Array; text: string; sigText: string | null }, pointers: { v1: string | null; next: string | null } | null,
  ): Promise<IndexVerdict | UntrustedError> {
    const originFile = fileOf(this.opts.source, ORIGIN_INDEX_FILE);
    let signed: DistIndex;
    try {
      signed = openIndex(origin.text);
    } catch (err) {
      return new UntrustedError(originFile, (err as Error).message);
    }
    // The origin's signature, and the rollback rule over the local pointers (what is served).
    const verdict = await set.checkIndex(origin.sigText, origin.bytes, { stamp: signed.next, pointers, now: new Date(this.opts.clock.now()) });
    if (!verdict.ok) return new UntrustedError(fileOf(this.opts.source, 'pointer' in verdict ? INDEX_FILE : ORIGIN_INDEX_SIG_FILE), verdict.detail);
    const file = fileOf(this.opts.source, INDEX_FILE);
    for (const r of local.releases) {
      const theirs = signed.releases.find((o) => o.stamp === r.stamp);
      if (!theirs) return new UntrustedError(file, `is not signed and lists ${r.stamp}, which the signed ${ORIGIN_INDEX_FILE} does not list`);
      if (theirs.sha256.public !== r.sha256.public) {
        return new UntrustedError(file, `is not signed and lists ${r.stamp} with public manifest sha256 ${r.sha256.public}, the signed ${ORIGIN_INDEX_FILE} ${theirs.sha256.public}`);
      }
      if (!sameEntry(theirs, r)) return new UntrustedError(file, `is not signed and lists ${r.stamp} otherwise than the signed ${ORIGIN_INDEX_FILE}`);
    }
    // Each pointer names a stamp listed (so signed, as checked above); v1 only one the origin marks publishable.
    for (const ns of ['v1', 'next'] as const) {
      const at = local[ns] === null ? null : local.releases.find((r) => r.stamp === local[ns]);
      if (local[ns] !== null && (!at || (ns === 'v1' && !at.publishable))) {
        return new UntrustedError(file, `is not signed and serves ${local[ns]} under ${ns}, which it does not list${ns === 'v1' ? ' as publishable' : ''}`);
      }
    }
    return verdict;
  }

  /** With trust: that `stamp`'s public manifest (whose sha256 index.json records) is signed by a trusted key, now. */
  private async checkStampSignature(stamp: string, manifestSha256: string): Promise<SignatureDoc> {
    const path = manifestSigPath(stamp);
    let sig: Uint8Array | null;
    try {
      sig = await this.opts.source.readFile(path);
    } catch (err) {
      throw readFailure(err, fileOf(this.opts.source, path));
    }
    const set = await this.trusted(this.opts.trust!);
    const verdict = await set.checkManifest(sig && new TextDecoder().decode(sig), { sha256: manifestSha256 }, stamp, new Date(this.opts.clock.now()));
    if (!verdict.ok) throw new UntrustedError(fileOf(this.opts.source, path), verdict.detail);
    return verdict.doc;
  }

  /** The trust check over its persisted mark, opened once; a mark that cannot be read is tried on the next re-read. */
  private trusted(trust: TrustedKeys | Promise<TrustedKeys>): Promise<TrustedSet> {
    this.trustSet ??= Promise.resolve(trust).then((trusted) => TrustedSet.open({ trusted, store: this.opts.trustMarks })).catch((err: unknown) => {
      this.trustSet = null;
      throw err;
    });
    return this.trustSet;
  }

  /** One log line per stamp and reason it cannot be opened (a refused signature: however many answers it fails). */
  private logStampProblem(stamp: string, r: Error, tail = this.index ? 'still serving the previous index' : 'answering 503 for it'): void {
    const file = fileOf(this.opts.source, INDEX_FILE);
    const why = r instanceof ArtefactError ? `${r.file}: ${r.check}` : (r?.message ?? String(r));
    this.logOnce(`stamp ${stamp} ${why}`, `[serve] ${file} names ${stamp}, which cannot be opened: ${why}; ${tail}`, file, why);
  }

  private indexUnusable(failure: ReadFailure): void {
    const why = failure instanceof ArtefactError ? failure.check : failure.reason;
    const where = failure instanceof ArtefactError ? failure.file : failure.url;
    this.logOnce(`index ${why}`, `[serve] ${where}: ${why}; ${this.index ? 'still serving the previous index' : 'nothing served until it is repaired'}`, where, why);
    if (!this.index) this.indexFailure = failure;
  }

  private logOnce(key: string, line: string, file: string, check: string): void {
    if (this.logged.has(key)) return;
    if (this.logged.size >= 1000) this.logged.clear();
    this.logged.add(key);
    this.log({ level: 'error', event: 'release_unavailable', line, file, check });
  }

  /**
   * The release a namespace serves, or null; rejects why, when it (or the index) cannot be opened. At once when the
   * index is fresh and its release open (nearly every request), else once the index is re-read or the release opened.
   */
  forNamespace(ns: Namespace): MaybePromise<Release | null> {
    if (this.index && this.opts.clock.now() - this.checkedAt < (this.opts.refreshMs ?? 1000)) {
      const served = this.servedNow[ns];
      if (served !== undefined) return served;
    }
    return this.forNamespaceLater(ns);
  }

  private async forNamespaceLater(ns: Namespace): Promise<Release | null> {
    const index = await this.current();
    const stamp = index?.[ns];
    return stamp ? this.release(stamp) : null;
  }

  /**
   * Release `stamp` as `index` (default: the current one) lists it. Rejects with ArtefactError when the index does
   * not list it or its files fail their checks, UpstreamError when a mirror's origin cannot give them.
   */
  release(stamp: string, index: DistIndex | null = this.index): Promise<Release> {
    const key = index && keyIn(index, stamp);
    if (!key) return Promise.reject(new ArtefactError(fileOf(this.opts.source, INDEX_FILE), `lists no release ${stamp}`));
    const known = this.releases.get(key);
    if (known) return known;
    const failed = this.failed.get(key);
    if (failed) return Promise.reject(failed);
    const sha256 = key.slice(stamp.length + 1);
    const opening = this.opts.trust
      ? this.checkStampSignature(stamp, sha256).then(async (sig) => {
          const opened = await loadRelease(this.opts.source, stamp, sha256, this.cache, this.shards, this.bodies, this.memos);
          opened.signingKeyId = sig.key_id;
          this.stampSigs.set(key, sig);
          return opened;
        })
      : loadRelease(this.opts.source, stamp, sha256, this.cache, this.shards, this.bodies, this.memos);
    opening.then(
      (opened) => {
        // A namespace whose release opened only after its index was taken (a retry) is answered at once from now on.
        if (this.servedKeys.v1 === key && this.servedNow.v1 === undefined) this.servedNow.v1 = opened;
        if (this.servedKeys.next === key && this.servedNow.next === undefined) this.servedNow.next = opened;
      },
      (err: unknown) => {
        if (this.releases.get(key) !== opening) return;
        this.releases.delete(key);
        if (err instanceof UntrustedError) this.logStampProblem(stamp, err, 'answering 503 for it');
        if (err instanceof ArtefactError || err instanceof UpstreamError) this.failed.set(key, err);
      },
    );
    this.releases.set(key, opening);
    return opening;
  }
}

/** Whether two index entries say the same of their stamp (field by field: key order is no part of it). */
const sameEntry = (a: IndexedRelease, b: IndexedRelease): boolean =>
  a.stamp === b.stamp && a.prior === b.prior && a.publishable === b.publishable && a.generated_at === b.generated_at &&
  a.sha256.manifest === b.sha256.manifest && a.sha256.public === b.sha256.public && a.sha256.private === b.sha256.private;

/** A release as opened: its stamp and the public manifest sha256 index.json vouches for. */
const releaseKey = (stamp: string, sha256: string): string => `${stamp} ${sha256}`;

/** releaseKey of `stamp` as `index` lists it, or null. */
function keyIn(index: DistIndex, stamp: string | null): string | null {
  const sha256 = stamp === null ? undefined : index.releases.find((r) => r.stamp === stamp)?.sha256.public;
  return sha256 === undefined ? null : releaseKey(stamp!, sha256);
}
