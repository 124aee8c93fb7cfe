// The explorer's contribution-file chunker and report writer, in process: every chunk is a CSV the project's reader
// parses into the file's own records under the file's header, rows and lines renumbered back into the file's numbering,
// whatever the records hold (quoted commas, quoted line breaks, CRLF, doubled quotes, empty lines) and wherever the
// browser's stream happens to cut the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsvText } from '../../compiler/read/csv-reader.ts';
import type { CheckResult } from '../../client/register-client.ts';
import { REPORT_COLUMNS } from '../../common/check-report.ts';
import { checkedRow, csvChunks, reportLines, withFileLines, type CheckedRow, type CsvChunk } from '../../explorer/check-csv.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The bytes as a stream of pieces cut at the given offsets (as File.stream() may cut them). */
async function* piecesOf(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const at of [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b)) {
    if (at > from) yield bytes.subarray(from, at);
    from = Math.max(from, at);
  }
  if (from < bytes.length) yield bytes.subarray(from);
}

async function chunksOf(text: string | Uint8Array, maxRows: number, maxBytes = 1 << 30, cuts: number[] = []): Promise<CsvChunk[]> {
  const out: CsvChunk[] = [];
  for await (const c of csvChunks(piecesOf(typeof text === 'string' ? enc.encode(text) : text, cuts), maxRows, maxBytes)) out.push(c);
  return out;
}

const lineFeeds = (s: string) => s.split('\n').length - 1;
/** The reader's blank record: nothing in any field (an empty line, a line of commas); it is no row. */
const isBlank = (fields: string[]) => fields.every((f) => f === '');
/** A record's fields written back as CSV, for the line feeds its quoted fields hold. */
const recordText = (fields: string[]) => fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',');

/** A field as a writer would quote it (or not): plain, or quoted holding commas, quotes, LF, CRLF. */
const field = fc.oneof(
  fc.stringMatching(/^[a-z0-9 _.-]{0,6}$/),
  fc.array(fc.constantFrom('a', 'b', ',', '""', '\n', '\r\n', ' ', 'é'), { maxLength: 6 }).map((parts) => `"${parts.join('')}"`),
);
const record = fc.oneof({ weight: 9, arbitrary: fc.array(field, { minLength: 3, maxLength: 3 }).map((f) => f.join(',')) }, { weight: 1, arbitrary: fc.constant('') });

describe('csvChunks', () => {
  it('cuts any file into chunks that parse to its rows under its header, numbered as in the file', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { maxLength: 40 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.nat(2),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 30, max: 400 }),
        fc.array(fc.nat(2000), { maxLength: 8 }),
        async (records, eol, finalEol, blanksFirst, maxRecords, maxBytes, cuts) => {
          const header = 'provider,external_id,"the ""name"",\nsaid"';
          // The file's last record may end without a line end, unless it is an empty one (then nothing would mark it).
          const last = records.length && (finalEol || records.at(-1) === '') ? eol : '';
          const lead = eol.repeat(blanksFirst);
          const text = `${lead}${header}${eol}${records.join(eol)}${records.length ? last : ''}`;
          const chunks = await chunksOf(text, maxRecords, maxBytes, cuts);
          // The file as the reader sees it: each record with the line it starts on; blank ones are no rows.
          const fileRows: { fields: string[]; line: number }[] = [];
          let line = 1 + blanksFirst + lineFeeds(header + eol);
          for (const r of records) {
            const fields = parseCsvText(r + eol)[0] ?? [''];
            if (!isBlank(fields)) fileRows.push({ fields, line });
            line += lineFeeds(r + eol);
          }
          const headerText = `${header}${eol}`;
          const got: { fields: string[]; line: number }[] = [];
          for (const c of chunks) {
            const body = dec.decode(c.body);
            expect(body.startsWith(headerText)).toBe(true);
            // Over the byte budget only when one record alone is.
            if (c.body.length > maxBytes) expect(parseCsvText(body).length).toBe(2);
            expect(c.firstRow).toBe(got.length + 1);
            const parsed = parseCsvText(body);
            expect(parsed[0]).toEqual(parseCsvText(headerText)[0]);
            expect(parsed.length - 1).toBeLessThanOrEqual(maxRecords);
            // Each record's line in the chunk, moved by the offset, is its line in the file.
            let inChunk = 1 + lineFeeds(headerText);
            let rows = 0;
            for (const fields of parsed.slice(1)) {
              if (!isBlank(fields)) {
                got.push({ fields, line: inChunk + c.lineOffset });
                rows++;
              }
              inChunk += lineFeeds(recordText(fields)) + 1;
            }
            expect(c.rows).toBe(rows);
            expect(rows).toBeGreaterThan(0);
          }
          expect(got).toEqual(fileRows);
          if (chunks.length) expect(chunks.at(-1)!.bytesRead).toBe(enc.encode(text).length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('1,000 rows a chunk; the BOM and a byte that is not UTF-8 reach the server as they are', async () => {
    const rows = Array.from({ length: 2500 }, (_, i) => `fotmob,${i},"Name, ${i}"`);
    const chunks = await chunksOf(`\uFEFFprovider,external_id,name\r\n${rows.join('\r\n')}\r\n`, 1000, 1 << 30, [7, 40_000]);
    expect(chunks.map((c) => [c.rows, c.firstRow, c.lineOffset])).toEqual([
      [1000, 1, 0],
      [1000, 1001, 1000],
      [500, 2001, 2000],
    ]);
    expect([...chunks[2].body.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);

    const bad = new Uint8Array([...enc.encode('provider,external_id,name\nfotmob,1,M'), 0xfc, ...enc.encode('ller\nfotmob,2,B\n')]);
    const [one, two] = await chunksOf(bad, 1);
    expect([...one.body].includes(0xfc)).toBe(true);
    expect(dec.decode(two.body)).toBe('provider,external_id,name\nfotmob,2,B\n');
  });

  it('the header is the first record that is not blank; blank records are no rows, and a chunk of them alone is not sent', async () => {
    const chunks = await chunksOf('\n\nprovider,external_id\nfotmob,1\n\n,\n"",""\nfotmob,2\n', 2);
    expect(chunks.map((c) => [dec.decode(c.body), c.rows, c.firstRow, c.lineOffset, c.headerLine])).toEqual([
      ['provider,external_id\nfotmob,1\n\n', 1, 1, 2, 3],
      ['provider,external_id\nfotmob,2\n', 1, 2, 6, 3],
    ]);
  });

  it('a quote inside an unquoted field does not open a quoted field (the reader refuses that record; the next one is its own)', async () => {
    const chunks = await chunksOf('provider,external_id,name\nfotmob,1,The "Reds\nfotmob,2,x\n', 1);
    expect(chunks.map((c) => dec.decode(c.body).split('\n')[1])).toEqual(['fotmob,1,The "Reds', 'fotmob,2,x']);
  });

  it('nothing to check: an empty file, or a header alone', async () => {
    expect(await chunksOf('', 10)).toEqual([]);
    expect(await chunksOf('provider,external_id\n', 10)).toEqual([]);
    expect(await chunksOf('provider,external_id', 10)).toEqual([]);
  });
});

describe('the report', () => {
  const features = { exact: 1, normalised: 1, alias: 0, token_overlap: 1, initials: 0, type: 1, country: 0 };
  const candidate = (reep_id: string, label: string, score: number) => ({ reep_id, entity_type: 'player' as const, label, score, features });
  const result = (over: Partial<CheckResult>): CheckResult => ({
    row: 1,
    line: 2,
    status: 'new_bridge',
    reep_id: 'rp0123456789abcd',
    band: 0.95,
    reasons: [],
    provider: 'fotmob',
    namespace: '',
    external_id: '1',
    candidates: [],
    extra: {},
    ...over,
  });

  it("is register check's CSV: its columns, then the pass-through ones as the first row names them; cells quoted as needed", () => {
    const rows: CheckedRow[] = [
      checkedRow(result({ reasons: ['name_agrees', 'x'], candidates: [candidate('rp0123456789abcd', 'Smith, "J"', 0.97), candidate('rp1123456789abcd', 'K', 0.5)], extra: { club: 'X, Y', note: 'two\nlines' } }), { lineOffset: 10 }),
      checkedRow(result({ row: 2, line: undefined, status: 'invalid', reep_id: null, band: null, reasons: ['unknown_provider'], extra: { club: '', note: 'n' } }), { lineOffset: 10 }),
    ];
    expect(rows[0].line).toBe(12);
    expect(rows[0].best).toEqual({ reep_id: 'rp0123456789abcd', label: 'Smith, "J"', score: 0.97 });
    expect(reportLines(rows).join('')).toBe(
      'row,line,status,reep_id,band,reasons,provider,namespace,external_id,candidates,club,note\n' +
        '1,12,new_bridge,rp0123456789abcd,0.95,name_agrees x,fotmob,,1,rp0123456789abcd:0.97 rp1123456789abcd:0.5,"X, Y","two\nlines"\n' +
        '2,,invalid,,,unknown_provider,fotmob,,1,,,n\n',
    );
    expect(parseCsvText(reportLines(rows).join(''))[0]).toEqual([...REPORT_COLUMNS, 'club', 'note']);
  });

  it("puts a chunk's line numbers in a refusal back on the file's lines", () => {
    const chunk = { lineOffset: 1000, headerLine: 3, headerLines: 1 };
    expect(withFileLines('400 invalid_csv: The CSV body cannot be read: line 5: unterminated quoted field', chunk)).toBe('400 invalid_csv: The CSV body cannot be read: line 1005: unterminated quoted field');
    expect(withFileLines('line 1: the header has no provider column', chunk)).toBe('line 3: the header has no provider column');
  });
});
