// One release's match index as GET /matches reads it (common/match-index.ts): row copies and list entries by
// position, refs by register ID, each bucket checked like every other family's. The generation comes from
// release.json, which the public manifest vouches for.
import { jsonString } from '../../common/json-string.ts';
import { LIST_ENTRIES_PER_BUCKET, LIST_ENTRY_BYTES, LIST_ENTRY_FIELDS, MATCH_REF, type MatchesDoc, type MatchListEntry, type MatchRefValue, type MatchRowValue } from '../../common/match-index.ts';
import { isPromise, type BucketFamilyReader, type MaybePromise } from '../interfaces.ts';
import { ArtefactError } from '../read-errors.ts';
import { RecentMap, type RecentRing } from './recent-map.ts';


/** A reference as a row shows it, as text and as UTF-8. */
export interface KeptReference {
  id: string;
  text: string;
  bytes: Uint8Array;
}


const utf8 = new TextEncoder();

/** Whether this machine stores a u32 as the lists do (little-endian): then a bucket is copied, not read number by number. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Whether `id` is the ASCII text of b[s, e). */
function sameId(id: string, b: Uint8Array, s: number, e: number): boolean {
  if (id.length !== e - s) return false;
  for (let i = 0; i < id.length; i++) if (id.charCodeAt(i) !== b[s + i]) return false;
  return true;
}

export class MatchIndex {
  constructor(
    readonly doc: MatchesDoc,
    private readonly rows: BucketFamilyReader,
    private readonly lists: BucketFamilyReader,
    private readonly refs: BucketFamilyReader,
    /** How logs name release.json, which states the generation. */
    readonly releaseFile: string,
    /**
     * Where its memos are bounded (the catalog's budget, shared across releases): `references`, each row reference's
     * text, which a page names up to 100 times five, nearly all repeats; `lists`, decoded list buckets, which a
     * page's walk reads a few of per anchor and popular anchors' pages read again.
     */
    kept: { references: RecentRing; lists: RecentRing },
  ) {
    this.references = new RecentMap(kept.references);
    this.byBytes = new RecentMap(kept.references);
    this.listBuckets = new RecentMap(kept.lists);
  }

  /** 64 lowercase hex digits naming this compiled index. */
  get generation(): string {
    if (!/^[0-9a-f]{64}$/.test(this.doc.generation)) {
      throw new ArtefactError(this.releaseFile, `match generation ${JSON.stringify(this.doc.generation)} is not a sha256`);
    }
    return this.doc.generation;
  }

  private readonly references: RecentMap<string, KeptReference>;
  private readonly byBytes: RecentMap<number, KeptReference>;
  private providerSet: Set<string> | null = null;

  /** A team's, competition's, season's or stage's label and lists; undefined for any other ID. */
  ref(id: string): MaybePromise<MatchRefValue | undefined> {
    return this.refs.get<MatchRefValue>(id);
  }

  /**
   * How a row names the team, competition, season or stage `id`: `{"reep_id":…,"label":…}` as text and as UTF-8,
   * the label null where the refs hold none (or no such reference). Kept once made, so usually ready at once.
   */
  reference(id: string): MaybePromise<KeptReference> {
    const kept = this.references.get(id);
    if (kept !== undefined) return kept;
    const r = this.ref(id);
    return isPromise(r) ? r.then((v) => this.keepReference(id, v)) : this.keepReference(id, r);
  }

  /**
   * reference() for the ID stored as ASCII in b[s, e) (a row's bytes): found by a hash of the bytes, so a kept
   * reference costs no string. A hash shared by two IDs only sends the second to reference().
   */
  referenceIn(b: Uint8Array, s: number, e: number): MaybePromise<KeptReference> {
    let h = 0x811c9dc5;
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 0x01000193);
    // A small integer key: the Map's fastest.
    h &= 0x3fffffff;
    const kept = this.byBytes.get(h);
    if (kept !== undefined && sameId(kept.id, b, s, e)) return kept;
    let id = '';
    for (let i = s; i < e; i++) id += String.fromCharCode(b[i]);
    const made = this.reference(id);
    if (isPromise(made)) return made.then((k) => this.keepByBytes(h, k));
    return this.keepByBytes(h, made);
  }

  private keepByBytes(h: number, k: KeptReference): KeptReference {
    if (this.references.get(k.id) === k) this.byBytes.set(h, k);
    return k;
  }

  private keepReference(id: string, r: MatchRefValue | undefined): KeptReference {
    const label = r && r[MATCH_REF.label] !== '' ? jsonString(r[MATCH_REF.label]) : 'null';
    const text = `{"reep_id":${jsonString(id)},"label":${label}}`;
    const kept = { id, text, bytes: utf8.encode(text) };
    // Only register IDs a row names are kept (a row's references are refs keys): never a client's text.
    if (r !== undefined) this.references.set(id, kept);
    return kept;
  }

  /** Whether some row bridges `provider` (the providers rows name): a required provider that none does passes no row. */
  bridgesSomewhere(provider: string): boolean {
    return (this.providerSet ??= new Set(this.doc.providers)).has(provider);
  }

  /** The msgpack bytes of row copy `position` (an anchor's `rows` plus its place in the list), for writing it out without decoding it. */
  rowBytes(position: number): MaybePromise<Uint8Array> {
    return this.rows.valueBytes(position);
  }

  /** Row copy `position`, decoded. */
  async row(position: number): Promise<MatchRowValue> {
    const v = await this.rows.at<MatchRowValue>(position);
    if (!Array.isArray(v) || v.length !== 17) throw new ArtefactError(this.releaseFile, `match row copy ${position} is not a row`);
    return v;
  }

  /** List entry `position` (a position some ref's runs cover). */
  async entry(position: number): Promise<MatchListEntry> {
    const all = await this.entries(position);
    const k = this.entrySlot(position);
    if (k + LIST_ENTRY_FIELDS > all.length) throw new ArtefactError(this.releaseFile, `match list entry ${position} is past its bucket's end`);
    return [all[k], all[k + 1], all[k + 2], all[k + 3]];
  }

  private readonly listBuckets: RecentMap<number, Uint32Array>;

  /**
   * The entries of the lists bucket holding `position`, as (ordinal, meta, sides, structure) fours: entry `position`
   * is at entrySlot(position) and the three after. Copied out of the verified bucket once and kept, so a walk's
   * reads cost an array index each.
   */
  entries(position: number): MaybePromise<Uint32Array> {
    const bucket = Math.floor(position / LIST_ENTRIES_PER_BUCKET);
    const kept = this.listBuckets.get(bucket);
    if (kept !== undefined) return kept;
    const b = this.lists.valueBytes(bucket);
    return isPromise(b) ? b.then((bytes) => this.entriesOf(bucket, bytes)) : this.entriesOf(bucket, b);
  }

  /** Where entry `position` sits in its entries() array. */
  entrySlot(position: number): number {
    return (position % LIST_ENTRIES_PER_BUCKET) * LIST_ENTRY_FIELDS;
  }

  /** A lists value (msgpack bin of little-endian u32 fours, common/match-index.ts) as its entries. */
  private entriesOf(bucket: number, value: Uint8Array): Uint32Array {
    const t = value[0];
    const head = t === 0xc4 ? 2 : t === 0xc5 ? 3 : t === 0xc6 ? 5 : 0;
    let n = -1;
    if (head === 2) n = value[1];
    else if (head === 3) n = (value[1] << 8) | value[2];
    else if (head === 5) n = ((value[1] << 24) | (value[2] << 16) | (value[3] << 8) | value[4]) >>> 0;
    if (n < 0 || head + n !== value.length || n % (LIST_ENTRY_BYTES) !== 0 || n > LIST_ENTRY_BYTES * LIST_ENTRIES_PER_BUCKET) {
      throw new ArtefactError(this.releaseFile, `match lists bucket ${bucket} is not a run of entries`);
    }
    const out = new Uint32Array(n / 4);
    if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(value.subarray(head));
    else {
      const v = new DataView(value.buffer, value.byteOffset + head, n);
      for (let i = 0; i < out.length; i++) out[i] = v.getUint32(4 * i, true);
    }
    this.listBuckets.set(bucket, out);
    return out;
  }

  private readonly bridgeStartTexts: Uint8Array[] = [];
  /** bridgeStart as UTF-8. */
  bridgeStartBytes(index: number): Uint8Array {
    return (this.bridgeStartTexts[index] ??= utf8.encode(this.bridgeStart(index)));
  }

  /** doc.generation as ASCII, as every row of a page states it. */
  get generationBytes(): Uint8Array {
    return (this.generationAscii ??= utf8.encode(this.doc.generation));
  }
  private generationAscii: Uint8Array | undefined;

  private readonly bridgeStarts: string[] = [];
  /** A row bridge's text up to its namespace, `{"provider":…,"namespace":`, for the provider a row names by `index`. */
  bridgeStart(index: number): string {
    return (this.bridgeStarts[index] ??= `{"provider":${jsonString(this.provider(index))},"namespace":`);
  }

  /** A provider's name by the index a row names it by. */
  provider(index: number): string {
    const p = this.doc.providers[index];
    if (p === undefined) throw new ArtefactError(this.releaseFile, `a match row names provider ${index}; release.json lists ${this.doc.providers.length}`);
    return p;
  }
}
