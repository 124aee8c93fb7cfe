// One release's match index as GET /matches reads it (common/match-index.ts): rows by ordinal, list entries by
// position, refs by register ID, each bucket checked like every other family's. The generation is the rows pack's
// sha256, and is taken only when the public manifest records that very digest for it.
import type { MatchesDoc, MatchListEntry, MatchRefValue, MatchRowValue } from '../../common/match-index.ts';
import type { BucketFamilyReader, MaybePromise } from '../interfaces.ts';
import { ArtefactError } from '../read-errors.ts';

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

  /** A team's, competition's, season's or stage's label and lists; undefined for any other ID. */
  ref(id: string): MaybePromise<MatchRefValue | undefined> {
    return this.refs.get<MatchRefValue>(id);
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

  /** A provider's name by the index a row names it by. */
  provider(index: number): string {
    const p = this.doc.providers[index];
    if (p === undefined) throw new ArtefactError(this.releaseFile, `a match row names provider ${index}; release.json lists ${this.doc.providers.length}`);
    return p;
  }
}
