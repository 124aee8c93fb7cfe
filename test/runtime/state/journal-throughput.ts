// Measures journal-store charges per second with group commit against one fsync per charge, in one run:
//   node bin/run-ts.mjs test/runtime/state/journal-throughput.ts [--clients 64] [--ms 1500]
// Not a vitest file (no .test suffix): it takes seconds and its numbers depend on the disk.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openJournalStore } from '../../../runtime/state/journal-store.ts';

const { values } = parseArgs({ options: { clients: { type: 'string', default: '64' }, ms: { type: 'string', default: '1500' } } });
const clients = Number(values.clients);
const ms = Number(values.ms);

/** `clients` callers each charging in a loop (like requests in flight on a server) for `ms` milliseconds. */
async function run(groupCommit: boolean): Promise<{ perSecond: number; syncs: number; charges: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-throughput-'));
  let syncs = 0;
  const store = await openJournalStore({
    dir,
    groupCommit,
    log: () => {},
    io: {
      sync: async (fh) => {
        syncs++;
        await fh.datasync();
      },
    },
  });
  let charges = 0;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < deadline) {
        await store.charge(`key${c % 16}`, '2026-11', 1, Number.MAX_SAFE_INTEGER);
        charges++;
      }
    }),
  );
  const elapsed = performance.now() - started;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { perSecond: Math.round((charges / elapsed) * 1000), syncs, charges };
}

const group = await run(true);
const single = await run(false);
console.log(`clients=${clients} duration=${ms}ms dir=${tmpdir()}`);
console.log(`group commit:       ${group.perSecond} charges/s (${group.charges} charges, ${group.syncs} fsyncs, ${(group.charges / group.syncs).toFixed(1)} per fsync)`);
console.log(`one fsync per each: ${single.perSecond} charges/s (${single.charges} charges, ${single.syncs} fsyncs)`);
console.log(`speed-up: ${(group.perSecond / single.perSecond).toFixed(1)}x`);
