// `register pull`: its options (declared once, for parsing and help) around pull().
import { defineCommand } from 'citty';
import { STAMP } from '../common/ids.ts';
import { badValue, ioOf } from '../cli/command-line.ts';
import { wholeNumber } from '../cli/generate-commands.ts';
import { pull } from './pull.ts';

export const pullCommand = defineCommand({
  meta: {
    name: 'pull',
    description: 'Copy a published release from a static host or CDN into a local dist that `register serve --dist DIR` serves, every file checked first',
  },
  args: {
    origin: { type: 'positional', description: 'URL of the published dist (the folder holding index.json)', valueHint: 'ORIGIN' },
    out: { type: 'string', description: 'Local dist folder to fill', valueHint: 'DIR', required: true },
    stamp: { type: 'string', description: 'Pull only this stamp (default: every stamp the origin lists)', valueHint: 'STAMP' },
    parallel: { type: 'string', description: 'Files fetched at once, from 1 to 64', valueHint: 'N', default: '8' },
  },
  async run(ctx) {
    const { origin, out, stamp, parallel } = ctx.args;
    const io = ioOf(ctx);
    if (!/^https?:\/\//i.test(origin)) throw badValue('pull', `ORIGIN must be an http:// or https:// URL, got ${JSON.stringify(origin)}`);
    if (stamp !== undefined && !STAMP.test(stamp)) throw badValue('pull', `--stamp must be a stamp like 20261005T180536Z, got ${JSON.stringify(stamp)}`);
    const t0 = Date.now();
    const result = await pull({ origin, out, stamp, parallel: wholeNumber('pull', 'parallel', parallel, 1, 64), log: (l) => io.err(l + '\n') });
    const bytes = result.stamps.reduce((s, p) => s + p.fetchedBytes, 0);
    const secs = (Date.now() - t0) / 1000;
    io.err(`[pull] ${out}: ${result.stamps.length} stamp(s), ${(bytes / 1e6).toFixed(1)} MB fetched in ${secs.toFixed(1)} s (${(bytes / 1e6 / Math.max(secs, 0.001)).toFixed(1)} MB/s); serve it with: register serve --dist ${out}\n`);
  },
});
