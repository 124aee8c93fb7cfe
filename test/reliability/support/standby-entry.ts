// A pre-warmed `register serve`: loads the serve command's modules, then waits for one line on stdin, then runs
// cli/main.ts exactly as `node bin/register.mjs serve …` does (same argv after the script). Run through tsx
// (standby-serve.mjs) or as one esbuild bundle (child-server.ts builds it), so a crash loop pays start-up while
// the previous server still runs rather than after each kill.
import '../../../runtime/cli.ts';
// What `serve` loads after parsing its arguments, loaded now too, so that a standby's "go" pays only the start
// itself: the runtime, and the driver of the state store its arguments name.
import '../../../runtime/server.ts';

if (process.argv.some((a) => a.startsWith('redis://'))) await import('../../../runtime/state/redis-store.ts');
else await Promise.all([import('../../../runtime/state/sqlite-store.ts'), import('../../../runtime/state/journal-import.ts')]);

process.stderr.write('[standby] warm\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();
await import('../../../cli/main.ts');
