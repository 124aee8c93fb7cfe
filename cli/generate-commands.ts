// `register generate` and `register import-v0`: their options (declared once, for parsing and help) around the
// generator's entry functions, generateRelease() and importV0().
import { defineCommand } from 'citty';
import { Progress } from '../common/progress.ts';
import { generateRelease, MAX_ENTITIES, MIN_ENTITIES } from '../generator/synthetic.ts';
import { importV0, DEFAULT_V0_DIR } from '../generator/from-v0.ts';
import type { ReleaseManifest } from '../generator/release-writer.ts';
import { badValue, ioOf } from './command-line.ts';

/** A whole number from `min` to `max`, or a usage error naming the option. */
export function wholeNumber(command: string, flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) {
    throw badValue(command, `--${flag} must be a whole number from ${min.toLocaleString('en-US')}${max < Number.MAX_SAFE_INTEGER ? ` to ${max.toLocaleString('en-US')}` : ' up'}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function summary(dir: string, m: ReleaseManifest, started: number): string {
  const rows = (t: string) => m.row_counts[`csv/${t}.csv.gz`] ?? 0;
  const bytes = Object.values(m.files).reduce((s, f) => s + f.bytes, 0);
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  return (
    `${dir}: ${rows('entities').toLocaleString('en-US')} entities, ${rows('bridges').toLocaleString('en-US')} bridges, ` +
    `${rows('redirects').toLocaleString('en-US')} redirects, ${(bytes / 1e6).toFixed(1)} MB` +
    `${m.prior ? `, prior ${m.prior}` : ''} in ${secs}s\n`
  );
}

const force = { type: 'boolean', description: 'Replace the release folder if it exists and is not empty' } as const;

export const generateCommand = defineCommand({
  meta: { name: 'generate', description: 'Write a synthetic release in the published format, deterministic per seed; with --prior, a successor with every kind of change' },
  args: {
    out: { type: 'string', description: 'Release folder to write; its name is the stamp', valueHint: 'releases/<stamp>', required: true },
    entities: { type: 'string', description: `Live entities of a fresh release (${MIN_ENTITIES} to ${MAX_ENTITIES.toLocaleString('en-US')}; ignored with --prior)`, valueHint: 'N', default: '10000' },
    seed: { type: 'string', description: 'Seed of every random choice: the same seed writes the same bytes', valueHint: 'S', default: '1' },
    prior: { type: 'string', description: 'Derive a successor of this release (about 1% of entities changed)', valueHint: 'releases/<older>' },
    'gzip-level': { type: 'string', description: 'gzip level of the CSV tables (0 to 9)', valueHint: 'L', default: '6' },
    force,
  },
  async run(ctx) {
    const a = ctx.args;
    const io = ioOf(ctx);
    const entities = wholeNumber('generate', 'entities', a.entities, MIN_ENTITIES, MAX_ENTITIES);
    const gzipLevel = wholeNumber('generate', 'gzip-level', a['gzip-level'], 0, 9);
    const started = performance.now();
    const progress = new Progress({ tag: 'generate' });
    try {
      const manifest = await generateRelease({
        out: a.out,
        entities,
        seed: /^\d+$/.test(a.seed) ? Number(a.seed) : a.seed,
        prior: a.prior,
        gzipLevel,
        overwrite: a.force === true,
        progress,
      });
      io.err(summary(a.out, manifest, started));
    } finally {
      progress.end();
    }
  },
});

export const importV0Command = defineCommand({
  meta: { name: 'import-v0', description: 'Convert the real v0 register data into a release' },
  args: {
    from: { type: 'string', description: 'Folder of the v0 register CSVs', valueHint: 'DIR', default: DEFAULT_V0_DIR },
    out: { type: 'string', description: 'Release folder to write; its name is the stamp', valueHint: 'releases/<stamp>', required: true },
    prior: {
      type: 'string',
      description: 'An earlier import this release succeeds: named as its prior, its redirects kept, IDs it published and this one lacks tombstoned',
      valueHint: 'releases/<older>',
    },
    'demo-edits': {
      type: 'boolean',
      description: 'With --prior: merge one duplicate club and correct one score (invented), so the changelog of a successor of the same v0 data shows something',
    },
    force,
  },
  async run(ctx) {
    const a = ctx.args;
    const io = ioOf(ctx);
    if (a['demo-edits'] && a.prior === undefined) throw badValue('import-v0', '--demo-edits needs --prior (the release the edits differ from)');
    const started = performance.now();
    const manifest = await importV0({
      from: a.from, out: a.out, prior: a.prior, overwrite: a.force === true, demoEdits: a['demo-edits'] === true,
      onEdit: (line) => io.err(`[import-v0] demo edit: ${line}\n`),
    });
    io.err(summary(a.out, manifest, started));
  },
});
