// The explorer's contribution-file chunker and report writer, in process: every chunk is a CSV the project's reader
// parses into the file's own records under the file's header, rows and lines renumbered back into the file's numbering,
// whatever the records hold (quoted commas, quoted line breaks, CRLF, doubled quotes, empty lines) and wherever the
// browser's stream happens to cut the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsvText } from '../../compiler/read/csv-reader.ts';
import { checkedRow, csvChunks, reportLines, REPORT_COLUMNS, type CheckedRow, type CsvChunk } from '../../explorer/check-csv.ts';

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
    expect(chunks.map((c) => [dec.decode(c.body), c.rows, c.firstRow, c.lineOffset])).toEqual([
      ['provider,external_id\nfotmob,1\n\n', 1, 1, 2],
      ['provider,external_id\nfotmob,2\n', 1, 2, 6],
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
  const result = (over: Partial<Parameters<typeof checkedRow>[0]>) =>
    checkedRow(
      {
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
      },
      10,
    );

  it('has the report columns, then the file columns in their first order; cells quoted as needed; reasons joined by ;', () => {
    const rows: CheckedRow[] = [
      result({ line: 2, reasons: ['a', 'b'], candidates: [{ reep_id: 'rp0123456789abcd', label: 'Smith, "J"\nJr', score: 0.97 }], extra: { club: 'X' } }),
      result({ row: 2, line: null, status: 'invalid', reep_id: null, band: null, reasons: ['unknown_provider'], extra: { note: 'n', club: 'Y' } }),
    ];
    expect(rows[0].line).toBe(12);
    const lines = reportLines(rows);
    expect(lines.every((l) => l.endsWith('\r\n'))).toBe(true);
    const parsed = parseCsvText(lines.join(''));
    expect(parsed).toEqual([
      [...REPORT_COLUMNS, 'club', 'note'],
      ['1', '12', 'new_bridge', 'rp0123456789abcd', '0.95', 'a;b', 'fotmob', '', '1', 'rp0123456789abcd', 'Smith, "J"\nJr', '0.97', 'X', ''],
      ['2', '', 'invalid', '', '', 'unknown_provider', 'fotmob', '', '1', '', '', '', 'Y', 'n'],
    ]);
  });

  it('keeps the best candidate only', () => {
    const r = result({ candidates: [{ reep_id: 'rpa', label: 'A', score: 0.9 }, { reep_id: 'rpb', label: 'B', score: 0.8 }] });
    expect(r.best).toEqual({ reep_id: 'rpa', label: 'A', score: 0.9 });
  });
});
