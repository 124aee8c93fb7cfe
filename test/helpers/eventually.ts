// Waiting for what a server does in its own time (a reload, a reconnection, a refund): poll until it holds. The limit
// only stops a wait that would never end, so it lies far beyond any poll or retry interval, busy machine included.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `check()` holds; throws naming `what` after `limitMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
