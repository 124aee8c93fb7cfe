// A pre-warmed `register serve`: loads the serve command's modules, then waits for one line on stdin, then runs
// cli/main.ts exactly as `node bin/register.mjs serve …` does (same argv after the script). Run through tsx
// (standby-serve.mjs) or as one esbuild bundle (child-server.ts builds it), so a crash loop pays start-up while
// the previous server still runs rather than after each kill.
import '../../../runtime/cli.ts';
// What `serve` loads after parsing its arguments, loaded now too, so that a standby's "go" pays only the start itself.
import '../../../runtime/server.ts';
import '../../../runtime/ops/logger.ts';
import '../../../runtime/state/sqlite-store.ts';
import '../../../runtime/state/journal-import.ts';
import '../../../runtime/state/redis-store.ts';

process.stderr.write('[standby] warm\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();
await import('../../../cli/main.ts');
