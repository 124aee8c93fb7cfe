// `register pull`: its options (declared once, for parsing and help) around pull().
import { defineCommand } from 'citty';
import { STAMP } from '../common/ids.ts';
import { badValue, ioOf, trustOption } from '../cli/command-line.ts';
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
    trust: {
      type: 'string',
      description: 'Require signatures by one of these public keys (.pub files or ed25519:… keys, comma-separated), unexpired. Without it only the hashes are checked, against the host\'s own index.json',
      valueHint: 'KEY[,KEY…]',
    },
    parallel: { type: 'string', description: 'Files fetched at once, from 1 to 64', valueHint: 'N', default: '8' },
  },
  async run(ctx) {
    const { stamp, parallel } = ctx.args;
    // Both required: checked before run() (cli/command-line.ts), which citty's types do not know.
    const origin = String(ctx.args.origin);
    const out = String(ctx.args.out);
    const io = ioOf(ctx);
    if (!/^https?:\/\//i.test(origin)) throw badValue('pull', `ORIGIN must be an http:// or https:// URL, got ${JSON.stringify(origin)}`);
    if (stamp !== undefined && !STAMP.test(stamp)) throw badValue('pull', `--stamp must be a stamp like 20261005T180536Z, got ${JSON.stringify(stamp)}`);
    const jobs = wholeNumber('pull', 'parallel', parallel, 1, 64);
    // Comma-separated as for verify and serve (the parser refuses it given twice rather than drop a key).
    const trusted = (await trustOption('pull', ctx.args.trust)) ?? undefined;
    const t0 = Date.now();
    const result = await pull({ origin, out, stamp, trusted, parallel: jobs, log: (l) => io.err(l + '\n') });
    const bytes = result.stamps.reduce((s, p) => s + p.fetchedBytes + p.patchedBytes, 0);
    const secs = (Date.now() - t0) / 1000;
    io.err(`[pull] ${out}: ${result.stamps.length} stamp(s), ${(bytes / 1e6).toFixed(1)} MB fetched in ${secs.toFixed(1)} s (${(bytes / 1e6 / Math.max(secs, 0.001)).toFixed(1)} MB/s); serve it with: register serve --dist ${out}\n`);
  },
});
