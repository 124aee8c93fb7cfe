// How logs and errors name a Redis store: its own module, so the store and the `--state` parser that both name it
// depend on it rather than on each other (the parser must not load ioredis, the store must not load the parser).

/** A Redis URL as logs may show it: no user or password. */
export function redisLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}
