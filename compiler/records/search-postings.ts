// Search postings: stage 2 writes one line per token of each live entity, `<token>\t<doc>\t<source>`, and the search
// stage gathers them by token. `doc` is the entity's position among its range's search docs and `source` one digit
// (how strongly the name backs the entity, below SOURCES). Lines are grouped by the token's first three characters,
// so a prefix and every token it starts meet in one group.
import { bucketOf } from '../../common/hash.ts';
import type { GroupSpill } from '../write/group-spill.ts';

export const SEARCH_GROUPS = 256;
/** Sources are 0 .. SOURCES - 1: the search stage packs one beside an ordinal as `ordinal * SOURCES + source`. */
export const SOURCES = 4;

const searchGroupOf = (token: string): number => bucketOf(token.slice(0, 3), SEARCH_GROUPS);

/** Writes one posting. Tokens are runs of letters and digits, so a tab-separated line needs no escaping. */
export function addPosting(spill: GroupSpill, token: string, doc: number, source: number): void {
  spill.addLine(searchGroupOf(token), `${token}\t${doc}\t${source}`);
}

/** Calls `use` for each posting of a group's text, in the order they were written. */
export function forEachPosting(text: string, use: (token: string, doc: number, source: number) => void): void {
  for (let pos = 0; pos < text.length; ) {
    const t1 = text.indexOf('\t', pos);
    let doc = 0;
    let at = t1 + 1;
    for (let c = text.charCodeAt(at); c !== 9; c = text.charCodeAt(++at)) doc = doc * 10 + (c - 48);
    use(text.slice(pos, t1), doc, text.charCodeAt(at + 1) - 48);
    pos = text.indexOf('\n', at + 1) + 1;
  }
}
