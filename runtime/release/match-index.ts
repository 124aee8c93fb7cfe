// One release's match index as GET /matches reads it (common/match-index.ts): rows by ordinal, list entries by
// position, refs by register ID, each bucket checked like every other family's. The generation is the rows pack's
// sha256, and is taken only when the public manifest records that very digest for it.
import { jsonString } from '../../common/json-string.ts';
import { MATCH_REF, type MatchesDoc, type MatchListEntry, type MatchRefValue, type MatchRowValue } from '../../common/match-index.ts';
import { isPromise, type BucketFamilyReader, type MaybePromise } from '../interfaces.ts';
import { ArtefactError } from '../read-errors.ts';
import { RecentMap } from './recent-map.ts';

/**
 * References whose row text (`{"reep_id":…,"label":…}`) is kept across pages. A page names up to 100 rows of five
 * references each, nearly all of them repeats (a team's own ID, its competition and season); a kept text is one
 * Map lookup instead of a refs lookup and the quoting of a label. ~100 bytes each: ~6 MiB when full, and the whole
 * refs family of a full-size release (~70k) fits.
 */
const KEPT_REFERENCES = 64 * 1024;

export class MatchIndex {
  constructor(
    readonly doc: MatchesDoc,
    private readonly rows: BucketFamilyReader,
    private readonly lists: BucketFamilyReader,
    private readonly refs: BucketFamilyReader,
    /** The rows pack's sha256 as the public manifest lists it (undefined: not listed). */
    private readonly rowsSha256: string | undefined,
    /** How logs name release.json, which states the generation. */
    private readonly releaseFile: string,
  ) {}

  /** 64 lowercase hex digits naming this compiled index; a release.json that disagrees with its manifest is damage. */
  get generation(): string {
    if (!/^[0-9a-f]{64}$/.test(this.doc.generation) || this.doc.generation !== this.rowsSha256) {
      throw new ArtefactError(this.releaseFile, `match generation ${JSON.stringify(this.doc.generation)} is not the manifest's sha256 of ${this.doc.rows.pack}`);
    }
    return this.doc.generation;
  }

  private readonly references = new RecentMap<string, string>(KEPT_REFERENCES);
  private providerSet: Set<string> | null = null;

  /** A team's, competition's, season's or stage's label and lists; undefined for any other ID. */
  ref(id: string): MaybePromise<MatchRefValue | undefined> {
    return this.refs.get<MatchRefValue>(id);
  }

  /**
   * How a row names the team, competition, season or stage `id`: `{"reep_id":…,"label":…}`, the label null where
   * the refs hold none (or no such reference). Kept once made, so it is usually at hand at once.
   */
  reference(id: string): MaybePromise<string> {
    const kept = this.references.get(id);
    if (kept !== undefined) return kept;
    const r = this.ref(id);
    return isPromise(r) ? r.then((v) => this.keepReference(id, v)) : this.keepReference(id, r);
  }

  /** The reference text a row shows for `id`, if it is kept (see reference). */
  keptReference(id: string): string | undefined {
    return this.references.get(id);
  }

  private keepReference(id: string, r: MatchRefValue | undefined): string {
    const label = r && r[MATCH_REF.label] !== '' ? jsonString(r[MATCH_REF.label]) : 'null';
    const text = `{"reep_id":${jsonString(id)},"label":${label}}`;
    // Only register IDs a row names are kept (a row's references are refs keys): never a client's text.
    if (r !== undefined) this.references.set(id, text);
    return text;
  }

  /** Whether some row bridges `provider` (the providers rows name): a required provider that none does passes no row. */
  bridgesSomewhere(provider: string): boolean {
    return (this.providerSet ??= new Set(this.doc.providers)).has(provider);
  }

  /** The row of match `ordinal` (below doc.count). */
  async row(ordinal: number): Promise<MatchRowValue> {
    const v = await this.rows.at<MatchRowValue>(ordinal);
    if (!Array.isArray(v) || v.length !== 17) throw new ArtefactError(this.releaseFile, `match row ${ordinal} is not a row`);
    return v;
  }

  /** List entry `position` (below doc.lists.entries). */
  async entry(position: number): Promise<MatchListEntry> {
    const v = await this.lists.at<MatchListEntry>(position);
    if (!Array.isArray(v) || v.length !== 2) throw new ArtefactError(this.releaseFile, `match list entry ${position} is not an entry`);
    return v;
  }

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
