// `register generate` and `register import-v0`: argument parsing over generateRelease() and importV0().
import { parseArgs } from 'node:util';
import { RegisterError } from '../common/errors.ts';
import { generateRelease } from './synthetic.ts';
import { importV0, DEFAULT_V0_DIR } from './from-v0.ts';
import type { ReleaseManifest } from './release-writer.ts';

function parse(argv: string[], command: string, options: NonNullable<Parameters<typeof parseArgs>[0]>['options']) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values as Record<string, string | boolean | undefined>;
  } catch (e) {
    throw new RegisterError(command, (e as Error).message);
  }
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new RegisterError('generate', `${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
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

/** `register generate --out releases/<stamp> [--entities N] [--seed S] [--prior releases/<older>] [--force]` */
export async function generateCommand(argv: string[]): Promise<void> {
  const v = parse(argv, 'generate', {
    out: { type: 'string' },
    entities: { type: 'string' },
    seed: { type: 'string' },
    prior: { type: 'string' },
    'gzip-level': { type: 'string' },
    force: { type: 'boolean' },
  });
  if (typeof v.out !== 'string') throw new RegisterError('generate', '--out releases/<stamp> is required');
  const seedText = typeof v.seed === 'string' ? v.seed : '1';
  const started = performance.now();
  const manifest = await generateRelease({
    out: v.out,
    entities: positiveInt(v.entities as string | undefined, '--entities', 10_000),
    seed: /^\d+$/.test(seedText) ? Number(seedText) : seedText,
    prior: v.prior as string | undefined,
    gzipLevel: positiveInt(v['gzip-level'] as string | undefined, '--gzip-level', 6),
    overwrite: v.force === true,
  });
  process.stderr.write(summary(v.out, manifest, started));
}

/** `register import-v0 [--from ../shared/real-data/v0-register] --out releases/<stamp> [--force]` */
export async function importV0Command(argv: string[]): Promise<void> {
  const v = parse(argv, 'import-v0', {
    from: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean' },
  });
  if (typeof v.out !== 'string') throw new RegisterError('import-v0', '--out releases/<stamp> is required');
  const started = performance.now();
  const manifest = await importV0({ from: (v.from as string | undefined) ?? DEFAULT_V0_DIR, out: v.out, overwrite: v.force === true });
  process.stderr.write(summary(v.out, manifest, started));
}
