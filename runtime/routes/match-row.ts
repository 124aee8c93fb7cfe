// One /matches row as JSON text, its fields in the contract's order, written straight from the index's row.
import { jsonString } from '../../common/json-string.ts';
import { MATCH_STATES, type MatchRowValue } from '../../common/match-index.ts';
import { isPromise, type MaybePromise } from '../interfaces.ts';
import type { MatchIndex } from '../release/match-index.ts';

/** `"state":…` by state code: the known states quoted, anything else null. */
const STATE_TEXT = (code: number) => (code < MATCH_STATES.length ? `"${MATCH_STATES[code]}"` : 'null');

/**
 * A row as the contract lists its fields, in that order; `wanted` lists the providers whose bridges it shows (null:
 * all). At once when the index keeps the text of each reference the row names (a page's usual case), else once they
 * are read.
 */
export function rowText(row: MatchRowValue, generation: string, index: MatchIndex, wanted: readonly string[] | null): MaybePromise<string> {
  const refs: string[] = [];
  let pending: Promise<unknown>[] | null = null;
  // home, away, competition, season, stage: fields 3 to 7.
  for (let i = 0; i < 5; i++) {
    const id = row[3 + i] as string | null;
    if (id === null) {
      refs.push('null');
      continue;
    }
    const kept = index.reference(id);
    if (isPromise(kept)) {
      refs.push('');
      (pending ??= []).push(kept.then((k) => (refs[i] = k.text)));
    } else refs.push(kept.text);
  }
  return pending === null ? compose(row, generation, index, wanted, refs) : Promise.all(pending).then(() => compose(row, generation, index, wanted, refs));
}

function compose(row: MatchRowValue, generation: string, index: MatchIndex, wanted: readonly string[] | null, refs: string[]): string {
  const [id, playedOn, state, , , , , , hs, as, form, shH, shA, basis, leg, aggregateOf, b] = row;
  const str = (v: string | null) => (v === null ? 'null' : jsonString(v));
  const num = (v: number | null) => (v === null ? 'null' : String(v));
  let bridges = '';
  for (let i = 0; i < b.length; i += 3) {
    const p = b[i] as number;
    if (wanted !== null && !wanted.includes(index.provider(p))) continue;
    bridges += `${bridges ? ',' : ''}${index.bridgeStart(p)}${jsonString(String(b[i + 1]))},"external_id":${jsonString(String(b[i + 2]))}}`;
  }
  return (
    `{"reep_id":"${id}","generation":"${generation}","played_on":${str(playedOn)},"state":${STATE_TEXT(state)},` +
    `"home":${refs[0]},"away":${refs[1]},"competition":${refs[2]},"season":${refs[3]},"stage":${refs[4]},` +
    `"home_score":${num(hs)},"away_score":${num(as)},"result_form":${str(form)},"shootout_home":${num(shH)},"shootout_away":${num(shA)},` +
    `"score_basis":${str(basis)},"leg":${str(leg)},"aggregate_of":${str(aggregateOf)},"bridges":[${bridges}]}`
  );
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();
const ascii = (s: string): Uint8Array => utf8.encode(s);
const NULL = ascii('null');
/** The fixed text between a row's fields, in compose's order. */
const PIECES = {
  id: ascii('{"reep_id":'),
  generation: ascii(',"generation":"'),
  playedOn: ascii('","played_on":'),
  state: ascii(',"state":'),
  home: ascii(',"home":'),
  away: ascii(',"away":'),
  competition: ascii(',"competition":'),
  season: ascii(',"season":'),
  stage: ascii(',"stage":'),
  homeScore: ascii(',"home_score":'),
  awayScore: ascii(',"away_score":'),
  resultForm: ascii(',"result_form":'),
  shootoutHome: ascii(',"shootout_home":'),
  shootoutAway: ascii(',"shootout_away":'),
  scoreBasis: ascii(',"score_basis":'),
  leg: ascii(',"leg":'),
  aggregateOf: ascii(',"aggregate_of":'),
  bridges: ascii(',"bridges":['),
  externalId: ascii(',"external_id":'),
  end: ascii(']}'),
};
const STATE_BYTES = Array.from({ length: MATCH_STATES.length + 1 }, (_, code) => ascii(STATE_TEXT(code)));
/**
 * The row filters of a page as the byte reader checks them: the other anchors' IDs (null: not given), the one team
 * with its venue and opponent, and the indexes (in release.json's providers) of the required and missing providers.
 */
export interface RowFilter {
  teams: readonly string[] | null;
  competitions: readonly string[] | null;
  seasons: readonly string[] | null;
  team: string | null;
  venue: 'home' | 'away' | 'any';
  opponent: string | null;
  require: readonly number[];
  missing: readonly number[];
}

/** A field as the byte reader found it: nil, a string's byte span, or an integer. */
const NIL = -1;
/** A row's fields that hold text or nil (the ID, dates, references, codes), and those that hold integers or nil. */
const TEXT_FIELDS = [0, 1, 3, 4, 5, 6, 7, 10, 13, 14, 15];
const NUMBER_FIELDS = [8, 9, 11, 12];
const STR = -2;
/** The slot after the row's 16 fields: the bridges' place in the row, where each bridge part is read. */
const SCRATCH = 16;

/** A page's working memory: its output buffer and the fields of the row being read (PageWriter). */
interface Scratch {
  buf: Uint8Array;
  kind: Int32Array;
  num: Float64Array;
  start: Int32Array;
  end: Int32Array;
}
/**
 * Scratch of finished pages, taken by the next: made anew for each page, it was about a tenth of a cold page's CPU
 * (a buffer grown three or four times, zeroed each time, and its collection). A page that fails drops its scratch.
 */
const SPARE: Scratch[] = [];
const SPARES = 8;
/** The buffer a scratch starts with (a page of 20 rows is ~15 KiB); one grown past SPARE_BYTES is not kept. */
const SCRATCH_BYTES = 32 * 1024;
const SPARE_BYTES = 256 * 1024;
const scratch = (): Scratch =>
  SPARE.pop() ?? { buf: new Uint8Array(SCRATCH_BYTES), kind: new Int32Array(17), num: new Float64Array(17), start: new Int32Array(17), end: new Int32Array(17) };

/**
 * A page body written as UTF-8 straight from the rows' msgpack bytes: strings that need no escaping are copied as
 * they are stored, references come from the index's kept texts, and the page's byte count is where the writer
 * stands. Rows are written as rowText writes them, byte for byte; a row holding anything the byte reader does not
 * take (a value of another type) is written through rowText instead.
 */
export class PageWriter {
  private readonly scratch = scratch();
  // Grown as rows are written (a spare's buffer is reused as it was left).
  private buf = this.scratch.buf;
  /** Bytes written. */
  pos = 0;
  // The current row's fields: kind (NIL, STR or an integer's value ≥ 0 stored in `num`), and a string's span. Slot
  // SCRATCH (the bridges' own place in the row) holds each bridge part as it is read.
  private readonly kind = this.scratch.kind;
  private readonly num = this.scratch.num;
  private readonly start = this.scratch.start;
  private readonly end = this.scratch.end;
  private bridges: number[] = [];
  private row: Uint8Array = NULL;
  private readonly generation: Uint8Array;

  constructor(
    private readonly index: MatchIndex,
    private readonly wanted: readonly string[] | null,
  ) {
    this.generation = index.generationBytes;
  }

  /** Writes `s` as UTF-8. */
  text(s: string): void {
    this.room(s.length * 3);
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /**
   * Reads match row `bytes` (its msgpack value) for passes() and write(); false for a row of a shape the byte
   * reader leaves to the decoded row (a value of another type, a provider index release.json does not list).
   */
  read(bytes: Uint8Array): boolean {
    this.row = bytes;
    return this.fields(bytes);
  }

  /**
   * False when match row `bytes` is surely outside the other anchors of `f` (its teams, competition and season
   * are read, nothing after them); true when it may pass, to be read and checked whole. Most rows a selective
   * filter examines stop here.
   */
  anchorsMayPass(bytes: Uint8Array, f: RowFilter): boolean {
    if (!f.teams && !f.competitions && !f.seasons) return true;
    if (bytes.length < 3 || bytes[0] !== 0xdc || bytes[1] !== 0 || bytes[2] !== 17) return true;
    let p = 3;
    for (let i = 0; i <= 6; i++) {
      p = this.field(bytes, p, i);
      if (p < 0) return true;
    }
    this.row = bytes;
    if (f.teams && !(this.isAny(3, f.teams) || this.isAny(4, f.teams))) return false;
    if (f.competitions && !this.isAny(5, f.competitions)) return false;
    if (f.seasons && !this.isAny(6, f.seasons)) return false;
    return true;
  }

  /** Whether the row read passes `f`: the row filters of rowPasses (match-page.ts), on its bytes. */
  passes(f: RowFilter): boolean {
    const home = 3;
    const away = 4;
    if (f.teams && !(this.isAny(home, f.teams) || this.isAny(away, f.teams))) return false;
    if (f.competitions && !this.isAny(5, f.competitions)) return false;
    if (f.seasons && !this.isAny(6, f.seasons)) return false;
    const team = f.team;
    if (team !== null && f.venue !== 'any' && !this.is(f.venue === 'home' ? home : away, team)) return false;
    if (f.opponent !== null) {
      const other = team !== null && this.is(home, team) ? away : team !== null && this.is(away, team) ? home : -1;
      if (other < 0 || !this.is(other, f.opponent)) return false;
    }
    if (f.require.length || f.missing.length) {
      const br = this.bridges;
      const bridged = (p: number) => {
        for (let i = 0; i < br.length; i += 5) if (br[i] === p) return true;
        return false;
      };
      if (!f.require.every(bridged)) return false;
      if (f.missing.some(bridged)) return false;
    }
    return true;
  }

  /** Writes the row read, after a comma when `comma`. */
  write(comma: boolean): MaybePromise<void> {
    const bytes = this.row;
    const refs: (Uint8Array | null)[] = [null, null, null, null, null];
    let pending: Promise<unknown>[] | null = null;
    for (let i = 0; i < 5; i++) {
      const f = 3 + i;
      if (this.kind[f] === NIL) continue;
      const kept = this.index.referenceIn(bytes, this.start[f], this.end[f]);
      if (isPromise(kept)) (pending ??= []).push(kept.then((k) => (refs[i] = k.bytes)));
      else refs[i] = kept.bytes;
    }
    if (pending === null) return this.putRow(bytes, refs, comma);
    // The page waits for this row before it reads the next, so the fields read stay as they are.
    return Promise.all(pending).then(() => this.putRow(bytes, refs, comma));
  }

  /** Whether field `f` of the row read is the register ID `id`. */
  private is(f: number, id: string): boolean {
    if (this.kind[f] !== STR) return false;
    const s = this.start[f];
    if (this.end[f] - s !== id.length) return false;
    const b = this.row;
    for (let i = 0; i < id.length; i++) if (b[s + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private isAny(f: number, ids: readonly string[]): boolean {
    for (const id of ids) if (this.is(f, id)) return true;
    return false;
  }

  /** Takes back what was written from `at` on (a row that did not fit). */
  rewind(at: number): void {
    this.pos = at;
  }

  /** The bytes written, as a page of their own; the writer is done (its scratch goes to the next page). */
  bytes(): Uint8Array {
    const body = this.buf.slice(0, this.pos);
    if (this.buf.length <= SPARE_BYTES && SPARE.length < SPARES) {
      this.scratch.buf = this.buf;
      SPARE.push(this.scratch);
    }
    this.buf = new Uint8Array(0);
    this.pos = 0;
    return body;
  }

  /** Reads a row's fields; false for a shape rowText must write (see read's checks). */
  private fields(b: Uint8Array): boolean {
    // A row is an array of 17 (msgpack array16: 0xdc 0x00 0x11).
    if (b.length < 3 || b[0] !== 0xdc || b[1] !== 0 || b[2] !== 17) return false;
    let p = 3;
    for (let f = 0; f < 16; f++) {
      p = this.field(b, p, f);
      if (p < 0) return false;
    }
    // The state code: one the contract names or none (the last code).
    if (this.kind[2] < 0 || this.num[2] > MATCH_STATES.length) return false;
    // Reference and text fields hold strings or nil; scores and shoot-outs integers or nil.
    for (const f of TEXT_FIELDS) if (this.kind[f] >= 0 || (f === 0 && this.kind[f] !== STR)) return false;
    for (const f of NUMBER_FIELDS) if (this.kind[f] === STR) return false;
    // The match's ID is written unquoted by rowText, and references are looked up by ID: plain ASCII only.
    if (!plain(b, this.start[0], this.end[0])) return false;
    for (let f = 3; f <= 7; f++) if (this.kind[f] === STR && !plain(b, this.start[f], this.end[f])) return false;
    // Bridges: an array of (provider index, namespace, external ID) triples.
    let n: number;
    const t = b[p];
    if (t >= 0x90 && t <= 0x9f) {
      n = t & 0x0f;
      p++;
    } else if (t === 0xdc) {
      n = (b[p + 1] << 8) | b[p + 2];
      p += 3;
    } else return false;
    if (n % 3 !== 0) return false;
    const out: number[] = [];
    for (let i = 0; i < n; i += 3) {
      p = this.field(b, p, SCRATCH);
      if (p < 0 || this.kind[SCRATCH] < 0) return false;
      const provider = this.num[SCRATCH];
      if (provider >= this.index.doc.providers.length) return false;
      p = this.field(b, p, SCRATCH);
      if (p < 0 || this.kind[SCRATCH] !== STR) return false;
      const ns0 = this.start[SCRATCH];
      const ns1 = this.end[SCRATCH];
      p = this.field(b, p, SCRATCH);
      if (p < 0 || this.kind[SCRATCH] !== STR) return false;
      out.push(provider, ns0, ns1, this.start[SCRATCH], this.end[SCRATCH]);
    }
    if (p !== b.length) return false;
    this.bridges = out;
    return true;
  }

  /** Reads the msgpack value at `p` into field `f`; the position after it, or -1 for a type not taken here. */
  private field(b: Uint8Array, p: number, f: number): number {
    const t = b[p];
    let len: number;
    let at = p + 1;
    if (t < 0x80) return this.int(f, t, p + 1);
    if (t === 0xc0) {
      this.kind[f] = NIL;
      return p + 1;
    }
    if (t >= 0xa0 && t <= 0xbf) len = t & 0x1f;
    else if (t === 0xd9) {
      len = b[p + 1];
      at = p + 2;
    } else if (t === 0xda) {
      len = (b[p + 1] << 8) | b[p + 2];
      at = p + 3;
    } else if (t === 0xcc) return this.int(f, b[p + 1], p + 2);
    else if (t === 0xcd) return this.int(f, (b[p + 1] << 8) | b[p + 2], p + 3);
    else if (t === 0xce) return this.int(f, ((b[p + 1] << 24) | (b[p + 2] << 16) | (b[p + 3] << 8) | b[p + 4]) >>> 0, p + 5);
    else return -1;
    if (at + len > b.length) return -1;
    this.kind[f] = STR;
    this.start[f] = at;
    this.end[f] = at + len;
    return at + len;
  }

  private int(f: number, v: number, next: number): number {
    this.kind[f] = 0;
    this.num[f] = v;
    return next;
  }

  private putRow(b: Uint8Array, refs: (Uint8Array | null)[], comma: boolean): void {
    // Room for the whole row at once, so the pieces below are written unchecked: the fixed text (under 400 bytes),
    // the references, each bridge's fixed text, and the stored strings at up to six bytes a byte (an escape).
    const br = this.bridges;
    let need = 1024 + 6 * b.length + this.generation.length;
    for (const r of refs) if (r) need += r.length;
    for (let i = 0; i < br.length; i += 5) need += this.bridgeStart(br[i]).length + 32;
    this.room(need);
    if (comma) this.buf[this.pos++] = 0x2c;
    this.put(PIECES.id);
    this.str(b, 0);
    this.put(PIECES.generation);
    this.put(this.generation);
    this.put(PIECES.playedOn);
    this.str(b, 1);
    this.put(PIECES.state);
    this.put(STATE_BYTES[this.num[2]]);
    this.put(PIECES.home);
    this.put(refs[0] ?? NULL);
    this.put(PIECES.away);
    this.put(refs[1] ?? NULL);
    this.put(PIECES.competition);
    this.put(refs[2] ?? NULL);
    this.put(PIECES.season);
    this.put(refs[3] ?? NULL);
    this.put(PIECES.stage);
    this.put(refs[4] ?? NULL);
    this.put(PIECES.homeScore);
    this.numOrNull(8);
    this.put(PIECES.awayScore);
    this.numOrNull(9);
    this.put(PIECES.resultForm);
    this.str(b, 10);
    this.put(PIECES.shootoutHome);
    this.numOrNull(11);
    this.put(PIECES.shootoutAway);
    this.numOrNull(12);
    this.put(PIECES.scoreBasis);
    this.str(b, 13);
    this.put(PIECES.leg);
    this.str(b, 14);
    this.put(PIECES.aggregateOf);
    this.str(b, 15);
    this.put(PIECES.bridges);
    let first = true;
    for (let i = 0; i < br.length; i += 5) {
      const provider = br[i];
      if (this.wanted !== null && !this.wanted.includes(this.index.provider(provider))) continue;
      if (!first) this.buf[this.pos++] = 0x2c;
      first = false;
      this.put(this.bridgeStart(provider));
      this.span(b, br[i + 1], br[i + 2]);
      this.put(PIECES.externalId);
      this.span(b, br[i + 3], br[i + 4]);
      this.buf[this.pos++] = 0x7d;
    }
    this.put(PIECES.end);
  }

  /** index.bridgeStart as UTF-8 (kept by the index: a page is too short-lived to keep it). */
  private bridgeStart(provider: number): Uint8Array {
    return this.index.bridgeStartBytes(provider);
  }

  /** Copies `piece` where room was made for it (putRow). */
  private put(piece: Uint8Array): void {
    const n = piece.length;
    const buf = this.buf;
    let at = this.pos;
    // Most pieces are short, where a loop costs less than set()'s call into the engine; references and the
    // generation are not.
    if (n > 32) {
      buf.set(piece, at);
      this.pos = at + n;
      return;
    }
    for (let i = 0; i < n; i++) buf[at++] = piece[i];
    this.pos = at;
  }

  /** An integer field (≥ 0, below 2^32) in decimal, or null. */
  private numOrNull(f: number): void {
    if (this.kind[f] === NIL) {
      this.put(NULL);
      return;
    }
    let v = this.num[f];
    const buf = this.buf;
    const start = this.pos;
    do {
      buf[this.pos++] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
    buf.subarray(start, this.pos).reverse();
  }

  private str(b: Uint8Array, f: number): void {
    if (this.kind[f] === NIL) this.put(NULL);
    else this.span(b, this.start[f], this.end[f]);
  }

  /** A stored string as JSON: copied between quotes when it is printable ASCII without `"` or `\`, else as jsonString writes it. */
  private span(b: Uint8Array, s: number, e: number): void {
    if (!plain(b, s, e)) {
      const quoted = jsonString(utf8Decoder.decode(b.subarray(s, e)));
      this.room(quoted.length * 3);
      this.pos += utf8.encodeInto(quoted, this.buf.subarray(this.pos)).written;
      return;
    }
    this.room(e - s + 2);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = 0x22;
    for (let i = s; i < e; i++) buf[at++] = b[i];
    buf[at++] = 0x22;
    this.pos = at;
  }

  /** Room for `n` more bytes. */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }
}

/** Whether b[s, e) is printable ASCII without `"` or `\`: JSON text as it stands. */
function plain(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const c = b[i];
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}
