// Worlds and keys the reliability tests run against: the hand world with a key of every kind (fuzz), and a
// notice-heavy world (crash loop) whose provider feed is long enough that each kill cycle acknowledges new findings.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileAll } from '../../../compiler/compile.ts';
import { API_KEY } from '../../../runtime/keys/key-entry.ts';
import { addKey } from '../../../runtime/keys/key-file.ts';
import { writeHandRelease } from '../../fixtures/hand-release.ts';
import { ID, makeHandWorld, type World } from '../../fixtures/hand-world.ts';

/** The fake clock's start: keys expiring before it are expired, the quota period is 2026-11. */
export const FUZZ_START = Date.parse('2026-11-10T12:00:00Z');

interface FuzzKeys {
  /** Plenty of quota and rate: most requests get past the limits and reach the handlers. */
  partner: string;
  /** Provider-scoped (opta): unlocks /notices and /notices/ack. */
  opta: string;
  /** Provider-scoped (fbref). */
  fbref: string;
  /** Quota 3: soon answers 402. */
  tiny: string;
  /** Rate 1 per second: often answers 429. */
  slow: string;
  revoked: string;
  expired: string;
}

export interface FuzzWorld extends World {
  keysFile: string;
  keys: FuzzKeys;
  /** Quota of each key, by key id, so a test can ask the store for its remaining credits. */
  quotas: Map<string, number>;
}

export const keyId = (key: string): string => API_KEY.exec(key)![1];

/** The hand world (three releases, two notice batches) plus one key of every kind the contract distinguishes. */
export async function makeFuzzWorld(): Promise<FuzzWorld> {
  const world = await makeHandWorld();
  const keysFile = join(world.root, 'keys.json');
  const quotas = new Map<string, number>();
  const add = async (name: string, quota: number, rate: number, extra: { provider?: string; expires?: string; now?: Date } = {}) => {
    const { key } = await addKey({ file: keysFile, name, quota, rate, ...extra });
    quotas.set(keyId(key), quota);
    return key;
  };
  const keys: FuzzKeys = {
    partner: await add('partner', 10_000_000, 1_000_000),
    opta: await add('opta', 10_000_000, 1_000_000, { provider: 'opta' }),
    fbref: await add('fbref', 10_000_000, 1_000_000, { provider: 'fbref' }),
    tiny: await add('tiny', 3, 1_000_000),
    slow: await add('slow', 10_000_000, 1),
    revoked: await add('revoked', 1000, 2),
    // Issued "in the past" so that it has expired by the fake clock's time.
    expired: await add('expired', 1000, 2, { expires: '2026-11-01', now: new Date('2026-10-01T00:00:00Z') }),
  };
  const { revokeKey } = await import('../../../runtime/keys/key-file.ts');
  await revokeKey(keyId(keys.revoked), { file: keysFile });
  return { ...world, keysFile, keys, quotas };
}

const CRASH_STAMP = '20261008T000000Z';
export const CRASH_BATCH = 7;

export interface CrashWorld {
  root: string;
  dist: string;
  keysFile: string;
  partner: string;
  opta: string;
  /** Every finding of opta's current batch: opta-1 … opta-N. */
  findingIds: string[];
  /** IDs a lookup can use: live, redirected, tombstoned and never-published (all charged). */
  lookupIds: string[];
}

/**
 * One release (the hand world's IDs) whose opta batch holds `findings` findings, so that a long crash loop keeps
 * acknowledging findings that were not acknowledged before (an acknowledgement of an acknowledged finding writes
 * nothing and would prove nothing).
 */
export async function makeCrashWorld(findings: number): Promise<CrashWorld> {
  const root = mkdtempSync(join(tmpdir(), 'ir-crash-'));
  const releases = join(root, 'releases');
  const dist = join(root, 'dist');
  const e = (id: string, type: string, label: string) => [id, type, 'active', label, '', '', '', '', ''];
  const findingIds = Array.from({ length: findings }, (_, i) => `opta-${i + 1}`);
  const batch = {
    provider: 'opta',
    batch_id: CRASH_BATCH,
    generated_at: '2026-10-08T00:00:00Z',
    findings: findingIds.map((id, i) => ({
      finding_id: id, provider: 'opta', kind: 'score_outlier', title: `Check ${id}`, provider_ref: `ref-${i}`, source: { table: 'matches' },
      observed: '9-0', expected: '1-0', severity: 'medium', suggested_action: 'verify', payload: { n: i }, payload_hash: `h${i}`,
      first_seen_at: '2026-10-01T00:00:00Z', last_seen_at: '2026-10-08T00:00:00Z',
    })),
  };
  writeHandRelease(
    releases,
    CRASH_STAMP,
    {
      entities: [e(ID.arsenal, 'team', 'Arsenal F.C.'), e(ID.chelsea, 'team', 'Chelsea F.C.'), e(ID.palmer, 'player', 'Cole Palmer'), e(ID.match, 'match', 'Arsenal v Chelsea')],
      bridges: [['opta', '', 'g1', ID.match, ''], ['transfermarkt', 'verein', '11', ID.arsenal, '']],
      redirects: [[ID.mergedOld, ID.arsenal, 'merged'], [ID.tomb, '', 'de_corroborated']],
    },
    { gzip: true, notices: { opta: batch } },
  );
  await compileAll({ releases, dist, progress: false });
  const keysFile = join(root, 'keys.json');
  writeFileSync(keysFile, '{"keys":[]}\n');
  const partner = (await addKey({ file: keysFile, name: 'partner', quota: 10_000_000, rate: 1_000_000 })).key;
  const opta = (await addKey({ file: keysFile, name: 'opta', quota: 10_000_000, rate: 1_000_000, provider: 'opta' })).key;
  return { root, dist, keysFile, partner, opta, findingIds, lookupIds: [ID.arsenal, ID.chelsea, ID.palmer, ID.mergedOld, ID.tomb, ID.never] };
}
