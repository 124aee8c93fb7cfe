// `npm run bench:compile`: the benchmark's compile half at 100,000 entities, a couple of minutes instead of the
// full run's many; extra arguments pass through (e.g. `-- --seed 2`, or `-- --entities 500000`).
import { main } from './run.ts';

main(['--entities', '100000', '--skip-serve', ...process.argv.slice(2)]).then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`[bench] ${e.message}\n`);
    process.exit(1);
  },
);
