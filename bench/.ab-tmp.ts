import { compileAll } from '../compiler/compile.ts';
import { rmSync } from 'node:fs';
const rel = '/tmp/b49/rel';
for (let round = 0; round < 3; round++) {
  for (const share of round % 2 ? [false, true] : [true, false]) {
    const dist = `/tmp/b49/ab-${share}`;
    rmSync(dist, { recursive: true, force: true });
    const t0 = performance.now();
    await compileAll({ releases: rel, dist, stamp: '20261101T000000Z', progress: false, shareShards: share });
    const t1 = performance.now();
    await compileAll({ releases: rel, dist, stamp: '20261108T000000Z', progress: false, shareShards: share });
    const t2 = performance.now();
    console.log(`round ${round} share=${share}: first ${(t1 - t0).toFixed(0)} ms, successor ${(t2 - t1).toFixed(0)} ms, ratio ${((t2 - t1) / (t1 - t0)).toFixed(3)}`);
  }
}
