// `register check FILE --stamp S`: a contribution file checked against one compiled release, from a dist folder or
// an HTTP origin (opened by the same source and catalog `serve` reads), streamed: results are written as rows are
// checked, the same JSON bytes POST /contributions/check answers for the same rows (or a CSV of them), and the
// counts per status and band on stderr. Exit 0 when it ran, 1 on a file or release that cannot be read (naming
// the line), 2 on a bad command line.
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { defineCommand } from 'citty';
import { STAMP } from '../common/ids.ts';
import { RegisterError } from '../common/errors.ts';
import { ReleaseCatalog } from '../runtime/release/catalog.ts';
import type { Release } from '../runtime/release/open-release.ts';
import { createFsSource } from '../runtime/source/fs-source.ts';
import { createHttpSource } from '../runtime/source/http-source.ts';
import type { ShardSource } from '../runtime/interfaces.ts';
import { writeCheck } from '../runtime/contributions/check-stream.ts';
import { ContributionFileError, readContributionCsv } from '../runtime/contributions/contribution-file.ts';
import { candidatesCell, reportHeader, reportLine } from '../common/check-report.ts';
import { badValue, ioOf, processIo, type CommandIo } from './command-line.ts';

/** Output is handed to the stream in pieces of about this many characters: one write per result would be a syscall each. */
const FLUSH_CHARS = 64 * 1024;

/** A writer to `io` that gathers small pieces, and on the process's stdout waits when the reader is slower (backpressure). */
function bufferedOut(io: CommandIo): { write(text: string): Promise<void> | void; end(): Promise<void> } {
  let held: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!size) return;
    const text = held.join('');
    held = [];
    size = 0;
    if (io === processIo) {
      if (!process.stdout.write(text)) await once(process.stdout, 'drain');
    } else io.out(text);
  };
  return {
    write(text) {
      held.push(text);
      size += text.length;
      if (size >= FLUSH_CHARS) return flush();
    },
    end: flush,
  };
}

/** The release `stamp` of the dist `source` serves, or a refusal naming what is missing. */
async function openRelease(source: ShardSource, stamp: string, where: string): Promise<Release> {
  // The catalog's problem lines would repeat what the refusal below says.
  const catalog = new ReleaseCatalog({ source, clock: { now: () => Date.now() }, pin: stamp, log: () => {} });
  try {
    const index = await catalog.current();
    if (!index) throw new Error(`no readable index.json`);
    return await catalog.release(stamp, index);
  } catch (e) {
    throw new RegisterError('check', `cannot open release ${stamp} of ${where}: ${(e as Error).message}`);
  }
}

export const checkCommand = defineCommand({
  meta: {
    name: 'check',
    description: 'Check a contribution file (CSV: provider, external_id, name, date_of_birth, type, nationality, <provider>_id…) against one compiled release; results on stdout, counts on stderr',
  },
  args: {
    file: { type: 'positional', description: 'The contribution file (CSV with a header row; UTF-8)', valueHint: 'FILE' },
    stamp: { type: 'string', description: 'The compiled release to check against', valueHint: 'STAMP', required: true },
    dist: { type: 'string', description: 'Dist folder holding it (default dist, unless --origin)', valueHint: 'DIR' },
    origin: { type: 'string', description: 'Or the http(s):// URL of a host serving a dist\'s public part', valueHint: 'URL' },
    format: { type: 'enum', options: ['json', 'csv'], description: 'json: the bytes POST /contributions/check answers; csv: one line per result', default: 'json' },
  },
  async run(ctx) {
    const io = ioOf(ctx);
    const { file, stamp } = ctx.args as { file: string; stamp: string };
    if (!STAMP.test(stamp)) throw badValue('check', `--stamp ${JSON.stringify(stamp)} is no stamp (YYYYMMDDTHHMMSSZ)`);
    if (ctx.args.dist !== undefined && ctx.args.origin !== undefined) throw badValue('check', 'give --dist or --origin, not both');
    const origin = ctx.args.origin as string | undefined;
    if (origin !== undefined && !/^https?:\/\//i.test(origin)) throw badValue('check', `--origin ${JSON.stringify(origin)} is no http(s):// URL`);
    const dist = (ctx.args.dist as string | undefined) ?? 'dist';
    const source = origin !== undefined ? createHttpSource({ baseUrl: origin }) : createFsSource({ root: dist, reads: 'sync' });
    try {
      const release = await openRelease(source, stamp, origin ?? dist);
      const input = createReadStream(file, { highWaterMark: 1 << 16 });
      const rows = readContributionCsv(input as AsyncIterable<Uint8Array>, release.providers);
      const out = bufferedOut(io);
      const json = ctx.args.format === 'json';
      let header = false;
      let summary;
      try {
        summary = await writeCheck(release, rows, json ? (t) => out.write(t) : () => {}, json ? undefined : (r) => {
          const w = header ? null : out.write(reportHeader(r.extra.map(([k]) => k)));
          header = true;
          return w ?? out.write(reportLine(r, candidatesCell(r.candidates), r.extra.map(([, v]) => v)));
        });
      } catch (e) {
        await out.end();
        if (e instanceof ContributionFileError) throw new RegisterError('check', e.message, file);
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') throw new RegisterError('check', `cannot read the file (${code})`, file);
        throw e;
      }
      await out.end();
      io.err(`[check] ${summary.text()}\n`);
    } finally {
      await source.close();
    }
  },
});
