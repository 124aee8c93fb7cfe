// `register compile` and `register verify`: their options (declared once, for parsing and help) and the reporting
// around compileAll and verifyDist.
import { defineCommand } from 'citty';
import fg from 'fast-glob';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { STAMP } from '../common/ids.ts';
import { badValue, ioOf, trustOption } from '../cli/command-line.ts';
import { compileAll, listStamps } from './compile.ts';
import { writeCompileReport } from './compile-report.ts';
import { verifyDist } from './dist-manifest.ts';
import { verifyDistSignatures } from '../common/signing-files.ts';
import { DEFAULT_VALID_DAYS, normaliseInstant, parseSignature, sha256Hex } from '../common/signing.ts';
import { INDEX_FILE, INDEX_SIG_FILE } from '../common/dist-layout.ts';
import { signDist, signingKeyOf, signingTimeOf, validDays } from './sign-cli.ts';

export const compileCommand = defineCommand({
  meta: { name: 'compile', description: 'Compile every release not compiled yet, oldest first (or one stamp), into the dist folder' },
  args: {
    releases: { type: 'string', description: 'Folder of releases, one <stamp>/ folder each', valueHint: 'DIR', default: 'releases' },
    out: { type: 'string', description: 'Dist folder to write', valueHint: 'DIR', default: 'dist' },
    stamp: { type: 'string', description: 'Compile only this release (again, if it is compiled already)', valueHint: 'STAMP' },
    strict: { type: 'boolean', description: 'Refuse a release with referential slack instead of dropping and counting it' },
    sign: { type: 'string', description: 'Sign each compiled stamp and index.json with this private key (`register signing-key new`)', valueHint: 'FILE' },
    'valid-days': { type: 'string', description: `With --sign: days from the signing time to the signatures' valid_until (default ${DEFAULT_VALID_DAYS})`, valueHint: 'N' },
    'signed-at': { type: 'string', description: 'With --sign: signing time, ISO 8601 (default: SOURCE_DATE_EPOCH if set, else now)', valueHint: 'TIME' },
  },
  async run(ctx) {
    const { releases, out, stamp, strict } = ctx.args;
    const io = ioOf(ctx);
    // The key is read before compiling: a wrong path must not cost a compile.
    const days = validDays('compile', ctx.args['valid-days']);
    if (ctx.args.sign === undefined && ctx.args['signed-at'] !== undefined) throw badValue('compile', '--signed-at dates signatures: give --sign too');
    // Resolved (and a signature that would be born expired refused) before compiling, too.
    const signing = ctx.args.sign !== undefined ? signingTimeOf('compile', ctx.args['signed-at'], days) : null;
    const key = ctx.args.sign !== undefined ? await signingKeyOf('compile', ctx.args.sign) : null;
    await findReleases(releases);
    const t0 = Date.now();
    const reports = await compileAll({
      releases,
      dist: out,
      stamp,
      strict: strict === true,
      onCompiled: (r) => {
        // Timings go to the terminal only: the report in the dist holds nothing that differs from run to run.
        const wall = r.timings.reduce((a, t) => a + t.wallMs, 0);
        io.err(`[compile] ${r.stamp}: ${r.counts.entities} entities, ${r.counts.bridges} bridges, digest ${r.manifest.digest.slice(0, 16)}, stages ${(wall / 1000).toFixed(1)} s\n`);
        if (process.env.REGISTER_TIMINGS) for (const t of r.timings) io.err(`[compile] ${r.stamp}:   ${t.stage.padEnd(20)} ${String(t.wallMs).padStart(7)} ms wall ${String(t.cpuMs).padStart(7)} ms cpu  peak ${(t.peakRssBytes / 2 ** 20).toFixed(0)} MiB\n`);
        for (const s of r.slack) io.err(`[compile] ${r.stamp}: dropped ${s.count} × ${s.what} (e.g. ${s.example})\n`);
        io.err(`[compile] ${r.stamp}: report ${writeCompileReport(out, r)}\n`);
      },
      onWarning: (line) => io.err(`[compile] warning: ${line}\n`),
    });
    if (reports.length === 0) io.err('[compile] nothing to do: every release is compiled\n');
    else io.err(`[compile] ${reports.length} release(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    if (key) {
      const written = await signDist(out, reports.map((r) => r.stamp), key, signing!);
      io.err(`[compile] signed ${written.length - 1} stamp(s) and index.json with key ${key.keyId}\n`);
    } else if (reports.length > 0 && (await staleIndexSignature(out))) {
      // The old signature stays (the bytes written are those of an unsigned compile) and no longer matches.
      io.err(`[compile] warning: ${join(out, INDEX_SIG_FILE)} signs the previous index.json, so a mirror with --trust refuses this one: compile with --sign, or run register sign\n`);
    }
  },
});

/** Whether dist/index.json.sig exists and signs other bytes than dist/index.json now holds. */
async function staleIndexSignature(dist: string): Promise<boolean> {
  const sig = await readFile(join(dist, INDEX_SIG_FILE), 'utf8').catch(() => null);
  if (sig === null) return false;
  const doc = parseSignature(sig);
  return typeof doc === 'string' || doc.sha256 !== (await sha256Hex(await readFile(join(dist, INDEX_FILE))));
}

/**
 * The stamps of the releases under `dir` (folders named by a stamp, holding release.json). A folder that is not
 * there, or holds no release, is refused (exit 1, not 2: the command line is well formed, the file system is not
 * as it says), naming the folder; a release folder given in its parent's place is named as such.
 */
export async function findReleases(dir: string): Promise<string[]> {
  const st = await stat(dir).catch(() => null);
  if (!st) throw new RegisterError('compile', `no releases folder ${dir}/ (--releases names the folder that holds the <stamp>/ releases)`);
  if (!st.isDirectory()) throw new RegisterError('compile', `--releases ${dir} is not a folder`);
  const stamps = (await fg('*/release.json', { cwd: dir, onlyFiles: true, followSymbolicLinks: true }))
    .map((p) => p.slice(0, p.indexOf('/')))
    .filter((s) => STAMP.test(s))
    .sort();
  if (stamps.length > 0) return stamps;
  if (existsSync(join(dir, 'release.json'))) {
    throw new RegisterError('compile', `${dir} is a release, not a folder of releases: give --releases ${dirname(dir)}`);
  }
  throw new RegisterError('compile', `no release under ${dir}/ (a release is a folder named by its stamp, e.g. 20261005T180536Z/, holding release.json)`);
}

export const verifyCommand = defineCommand({
  meta: { name: 'verify', description: 'Re-hash every compiled release (public and private parts; the public part alone of a pulled copy) against its manifest and index.json; exit 1 naming each file that differs' },
  args: {
    dist: { type: 'string', description: 'Dist folder to check', valueHint: 'DIR', default: 'dist' },
    trust: { type: 'string', description: 'Also require signatures by one of these public keys (.pub files or ed25519:… keys, comma-separated), unexpired', valueHint: 'KEY[,KEY…]' },
    at: { type: 'string', description: "With --trust: check expiry as of this ISO 8601 time instead of now (e.g. next month's)", valueHint: 'TIME' },
  },
  async run(ctx) {
    const { dist } = ctx.args;
    const io = ioOf(ctx);
    if (ctx.args.at !== undefined && ctx.args.trust === undefined) throw badValue('verify', '--at checks signatures: give --trust too');
    let now = new Date();
    if (ctx.args.at !== undefined) {
      try {
        now = new Date(normaliseInstant(ctx.args.at));
      } catch (e) {
        throw badValue('verify', `--at: ${(e as Error).message}`);
      }
    }
    const trusted = await trustOption('verify', ctx.args.trust);
    const stamps = await listStamps(dist);
    if (stamps.length === 0) throw new RegisterError('verify', `no compiled release under ${dist}/`);
    const verdict = await verifyDist(dist, stamps);
    const signatures = trusted ? await verifyDistSignatures(dist, stamps, trusted, now) : null;
    if (signatures) verdict.index.push(...signatures.index);
    for (const p of verdict.index) io.err(`[verify] ${p}\n`);
    let bad = 0;
    for (const { stamp, published, publicOnly, problems } of verdict.stamps) {
      problems.push(...(signatures?.stamps.get(stamp) ?? []));
      for (const p of problems) io.err(`[verify] ${stamp}/${p}\n`);
      if (problems.length) bad++;
      else io.err(`[verify] ${stamp}: ok${signatures ? `, signed by ${signatures.signedBy.get(stamp)}` : ''}${published ? '' : ' (compiled, not listed in index.json)'}\n`);
      // Said either way: a public-only copy (what pull makes) answers no request that needs the private part.
      if (publicOnly) io.err(`[verify] ${stamp}: public part only: the private part (manifest.json, private/) is not held here, so it was not checked\n`);
    }
    if (verdict.index.length) throw new RegisterError('verify', `index.json is damaged or does not match the dist${bad ? `, and ${bad} release(s) differ from their manifest` : ''}`);
    if (bad) throw new RegisterError('verify', `${bad} release(s) differ from their manifest${signatures ? ' or are not signed as trusted' : ''}`);
  },
});
