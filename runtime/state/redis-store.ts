// The state store behind `--state redis://host:port/db` (or rediss://): quota counters, rate windows, seen and
// acknowledged findings in Redis, so any number of instances on any number of machines share them.
//
// One costing request is one Lua script (rate check, then the charge: one atomic step), and the commands of one
// event-loop tick go as one pipeline: at most one round trip per costing request, shared by the tick.
// Key names carry a hash tag per API key (`ir:{k:<id>}:…`) and per notice batch, so every script touches one slot
// and the same names work on Redis Cluster.
//
// Failures: with no connection every call fails at once with StateUnavailableError (the API answers 503 and
// charges nothing), and the client reconnects by itself. A script whose reply is lost with its connection may or
// may not have run; each charging script also adds its cost to a per-connection total stored beside the counter,
// so after reconnecting the driver refunds exactly what the unanswered scripts charged (see `settle`).
// Acknowledgements are answered only when Redis makes writes durable before replying (AOF with appendfsync always,
// read again before every acknowledgement is written); otherwise they answer 503 `ack_storage_unavailable`.
// A Redis that may evict keys (any maxmemory-policy but noeviction) could drop a quota counter or the revoked-keys
// set: it is refused at start, and when the policy changes at run time (read every second) every call but a refund
// answers 503 `state_unavailable` until it is noeviction again. Each of these changes writes one line, as does an
// outage and its end.

import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import { StateUnavailableError, type Admission, type ChargeResult, type NoticeState } from '../interfaces.ts';
import { redisLabel } from './redis-label.ts';
import { checkCharge, checkMarkArgs, checkNoticeArgs, checkRefund, creditsLeft, noticeStatesOf, type InspectableStateStore, type NoticeDetail } from './state-core.ts';

/** Options of openRedisStore. */
export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port/db` or `rediss://…` (TLS). */
  url: string;
  /** Prefix of every key name. Default `ir:`. */
  prefix?: string;
  /** A command without an answer after this long fails (503), ms. Default 2000. */
  commandTimeoutMs?: number;
  /** Where outage, recovery and durability lines go (never the password or key material). Default console.warn. */
  log?: (message: string) => void;
}

/** A Redis-backed store; `writable` follows whether the server makes writes durable before it replies. */
export interface RedisStateStore extends InspectableStateStore {
  /** The URL without credentials, for logs. */
  readonly label: string;
  /** The client, for the key table that lives in the same Redis. */
  readonly client: Redis;
  /** Resolves once connected (or rejects with why not): for tools that need Redis now, like `register keys`. */
  ready(): Promise<void>;
  /** Writes a probe key, or throws StateUnavailableError: the readiness probe. */
  ping(): Promise<void>;
  /** Scripts sent and pipelines (one write each) sent so far: the round trips a costing request shares. */
  readonly counters: { scripts: number; pipelines: number };
}

const DAY_MS = 86_400_000;
/** How often the server's eviction policy and persistence settings are read again, ms. */
const SETTINGS_EVERY_MS = 1000;

// KEYS: rate window (zset), quota counter, per-connection charged totals (hash).
// ARGV: now, rate, cost, quota, window member, check rate (1/0), counter expiry (ms since epoch), totals field.
// Returns {wait, charged (1, 0: quota refused, -1: rate refused), remaining}.
const ADMIT = `
local now = tonumber(ARGV[1])
if ARGV[6] == '1' then
  local limit = math.floor(tonumber(ARGV[2]))
  if limit < 1 then return {1000, -1, 0} end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1000)
  local n = redis.call('ZCARD', KEYS[1])
  if n >= limit then
    local leaving = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
    local wait = tonumber(leaving[2]) + 1000 - now
    if wait < 1 then wait = 1 end
    return {wait, -1, 0}
  end
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  -- An idle window goes after a minute; refreshing the time to live only when it runs low keeps most scripts from
  -- writing it again (each write is AOF bytes, and with appendfsync always, bytes to fsync).
  if redis.call('PTTL', KEYS[1]) < 30000 then redis.call('PEXPIRE', KEYS[1], 60000) end
end
local cost = tonumber(ARGV[3])
local quota = tonumber(ARGV[4])
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used + cost > quota then
  local left = quota - used
  if left < 0 then left = 0 end
  return {0, 0, left}
end
if cost > 0 then
  used = redis.call('INCRBY', KEYS[2], cost)
  if used == cost then redis.call('PEXPIREAT', KEYS[2], ARGV[7]) end
  redis.call('HINCRBY', KEYS[3], ARGV[8], cost)
  if redis.call('PTTL', KEYS[3]) < ${DAY_MS / 2} then redis.call('PEXPIRE', KEYS[3], ${DAY_MS}) end
end
local left = quota - used
if left < 0 then left = 0 end
return {0, 1, left}
`;

// KEYS: quota counter, refunds done (hash). ARGV: cost, refund id. Refunds at most what was used, once per id.
const REFUND = `
if redis.call('HSETNX', KEYS[2], ARGV[2], '1') == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], ${DAY_MS})
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = math.min(used, tonumber(ARGV[1]))
if back > 0 then redis.call('DECRBY', KEYS[1], back) end
return back
`;

// KEYS: quota counter, per-connection charged totals. ARGV: totals field, the total the driver saw answered.
// Refunds what scripts whose answers were lost charged, and sets the total to what was answered, so a retry gives nothing.
const SETTLE = `
local total = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local extra = total - tonumber(ARGV[2])
if extra <= 0 then return 0 end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = math.min(used, extra)
if back > 0 then redis.call('DECRBY', KEYS[1], back) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return back
`;

// KEYS: the batch's notice hash. ARGV: field prefix (s: or a:), value, finding IDs. First write wins, all in one step.
const MARK = `
for i = 3, #ARGV do redis.call('HSETNX', KEYS[1], ARGV[1] .. ARGV[i], ARGV[2]) end
return 0
`;

type ScriptClient = Redis & {
  irSettle(quotaKey: string, totalsKey: string, field: string, known: string): Promise<number>;
};

/** A command waiting for the end of the tick, when the tick's commands go as one pipeline. */
interface Queued {
  name: string;
  args: string[];
  resolve: (value: unknown) => void;
  reject: (e: Error) => void;
}

/** A failed command, and whether it had been written to a connection (so it may have run). */
class CommandFailed extends StateUnavailableError {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

/** Charges of one connection that may have run without their answer reaching us: settled after reconnecting. */
interface Unsettled {
  keyId: string;
  period: string;
  totalsKey: string;
  /** The totals field: connection token and period. */
  field: string;
}

/**
 * Connects to the Redis at `options.url` and checks its persistence settings. Starts even when Redis is down
 * (costing requests answer 503 until it answers); rejects only on a URL it cannot use.
 */
export async function openRedisStore(options: RedisStoreOptions): Promise<RedisStateStore> {
  const url = new URL(options.url);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new StateUnavailableError(`[state] ${options.url.replace(/\/\/[^@/]*@/, '//')}: not a redis:// or rediss:// URL`);
  const store = new RedisStore(url, options);
  await store.start();
  return store;
}

class RedisStore implements RedisStateStore {
  readonly label: string;
  readonly client: ScriptClient;
  readonly counters = { scripts: 0, pipelines: 0 };
  private queued: Queued[] = [];
  private readonly prefix: string;
  private readonly log: (message: string) => void;
  /** Whether the server fsyncs writes before replying, as last checked. */
  private durable = false;
  private durabilityNote = 'not checked yet';
  /** This connection's name in the per-key charged totals; a new one on every reconnect. */
  private token = newToken();
  /** Per totals key and field (so per connection): what the answered charges added up to. */
  private readonly answered = new Map<string, number>();
  /** Totals (key and field) with a charge whose answer was lost, to settle once connected again. */
  private readonly unsettled = new Map<string, Unsettled>();
  /** Refunds that could not be sent yet; each has an id, so a retry after a lost answer never refunds twice. */
  private pendingRefunds = new Map<string, { keyId: string; period: string; cost: number }>();
  private nextId = 0;
  private down: string | null = null;
  /** Why Redis may evict keys (its maxmemory-policy), or null when it may not (noeviction). */
  private evicting: string | null = null;
  private settingsTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private settling: Promise<void> | null = null;

  constructor(url: URL, options: RedisStoreOptions) {
    this.label = redisLabel(url);
    this.prefix = options.prefix ?? 'ir:';
    this.log = options.log ?? ((m: string) => console.warn(m));
    this.client = new Redis(url.href, {
      lazyConnect: true,
      // Fail at once while disconnected, and never send a command again on its own: a charge must run at most once.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectTimeout: 2000,
      retryStrategy: (attempt: number) => Math.min(50 * attempt, 500),
      tls: url.protocol === 'rediss:' ? {} : undefined,
    }) as ScriptClient;
    // Scripts are sent by name through the tick's pipeline (send); the first use on a connection sends the body.
    this.client.defineCommand('irAdmit', { numberOfKeys: 3, lua: ADMIT });
    this.client.defineCommand('irRefund', { numberOfKeys: 2, lua: REFUND });
    this.client.defineCommand('irSettle', { numberOfKeys: 2, lua: SETTLE });
    this.client.defineCommand('irMark', { numberOfKeys: 1, lua: MARK });
    this.client.on('error', (e: Error) => this.wentDown(describe(e)));
    this.client.on('close', () => this.connectionLost());
    this.client.on('ready', () => void this.cameBack());
  }

  get writable(): boolean {
    return this.durable;
  }

  /** Connects; rejects (and closes) when Redis answers with a policy that may evict keys. */
  async start(): Promise<void> {
    try {
      await this.client.connect();
      // The 'ready' handler checks too, but a store handed out must already know whether it can acknowledge.
      await this.checkSettings();
    } catch (e) {
      this.wentDown(describe(e));
      this.log(`[state] ${this.label}: serving anyway; costing requests answer 503 and acknowledgements are refused until Redis answers`);
    }
    if (this.evicting !== null) {
      await this.close();
      throw new StateUnavailableError(`[state] ${this.label}: refusing to start: ${this.evicting}`);
    }
    // Settings can change at run time (CONFIG SET): read them again every second.
    this.settingsTimer = setInterval(() => {
      if (this.client.status === 'ready') void this.checkSettings().catch(() => {});
    }, SETTINGS_EVERY_MS);
    this.settingsTimer.unref();
  }

  ready(): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        reject(new StateUnavailableError(`[state] ${this.label}: unreachable (${this.down ?? 'no answer'})`));
      }, 5000);
      this.client.once('ready', onReady);
    });
  }

  /** A write to a probe key of this instance's prefix: Redis refusing writes (out of memory, MISCONF) fails it too. */
  async ping(): Promise<void> {
    this.usable();
    await this.send('set', `${this.prefix}probe`, new Date().toISOString(), 'PX', '60000');
  }

  // ---- StateStore ----

  async admit(keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
    checkCharge(cost, quota);
    if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
    this.usable();
    const [wait, charged, left] = await this.runAdmit(keyId, period, cost, quota, nowMs, rate, true);
    return charged === -1 ? { wait, charge: null } : { wait: 0, charge: { ok: charged === 1, remaining: left } };
  }

  async hit(keyId: string, nowMs: number, rate: number): Promise<number> {
    if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
    this.usable();
    // A rate check alone is an admission of cost 0: nothing to charge, nothing to settle.
    const [wait] = await this.runAdmit(keyId, '-', 0, 0, nowMs, rate, true);
    return wait;
  }

  async charge(keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult> {
    checkCharge(cost, quota);
    this.usable();
    const [, charged, left] = await this.runAdmit(keyId, period, cost, quota, 0, 0, false);
    return { ok: charged === 1, remaining: left };
  }

  /** Refunds `cost`; when Redis cannot be reached it is kept and sent once Redis answers again (exactly once). */
  async refund(keyId: string, period: string, cost: number): Promise<void> {
    checkRefund(cost);
    if (cost === 0) return;
    const id = `${this.token}:r${++this.nextId}`;
    this.pendingRefunds.set(id, { keyId, period, cost });
    await this.sendRefund(id).catch(() => {});
  }

  async remaining(keyId: string, period: string, quota: number): Promise<number> {
    this.usable();
    const used = Number((await this.send<string | null>('get', this.quotaKey(keyId, period))) ?? 0);
    return creditsLeft(used, quota);
  }

  async notices(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>> {
    checkNoticeArgs('notices', provider, batchId, findingIds);
    return noticeStatesOf(await this.readDetails(provider, batchId, findingIds));
  }

  async noticeDetails(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>> {
    checkNoticeArgs('noticeDetails', provider, batchId, findingIds);
    return this.readDetails(provider, batchId, findingIds);
  }

  async markSeen(provider: string, batchId: number, findingIds: string[], at: string): Promise<void> {
    checkMarkArgs('markSeen', provider, batchId, findingIds, at);
    this.usable();
    if (findingIds.length === 0) return;
    await this.send('irMark', this.noticeKey(provider, batchId), 's:', at, ...findingIds);
  }

  async acknowledge(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void> {
    checkMarkArgs('acknowledge', provider, batchId, findingIds, at);
    this.usable();
    if (findingIds.length === 0) return;
    // Durable at this moment, not at the last check: `CONFIG SET appendonly no` may have come since. A round trip
    // more for an acknowledgement (they are rare). Redis 7.2's WAITAOF would prove the write itself fsynced.
    const settings = await Promise.all(DURABILITY_SETTINGS.map((name) => this.send<string[]>('config', 'GET', name)));
    this.noteDurability(settings.map((pair) => pair[1]));
    if (!this.durable) throw new StateUnavailableError(`[state] ${this.label}: acknowledgements cannot be made durable (${this.durabilityNote})`);
    const value = JSON.stringify([at, actor ?? null, note ?? null]);
    await this.send('irMark', this.noticeKey(provider, batchId), 'a:', value, ...findingIds);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.settingsTimer) clearInterval(this.settingsTimer);
    await this.settling;
    this.client.disconnect();
  }

  // ---- key names ----

  private quotaKey(keyId: string, period: string): string {
    return `${this.prefix}{k:${keyId}}:q:${period}`;
  }

  private noticeKey(provider: string, batchId: number): string {
    return `${this.prefix}{n:${provider}:${batchId}}`;
  }

  // ---- calls ----

  private async runAdmit(keyId: string, period: string, cost: number, quota: number, nowMs: number, rate: number, checkRate: boolean): Promise<[number, number, number]> {
    const base = `${this.prefix}{k:${keyId}}`;
    const token = this.token;
    const field = `${token}:${period}`;
    const totalsKey = `${base}:t`;
    const member = `${nowMs}:${token}:${++this.nextId}`;
    const q = Number.isFinite(quota) ? quota : Number.MAX_SAFE_INTEGER;
    this.counters.scripts++;
    let result: [number, number, number];
    try {
      result = await this.send('irAdmit', `${base}:r`, this.quotaKey(keyId, period), totalsKey, String(nowMs), String(rate), String(cost), String(q), member, checkRate ? '1' : '0', String(counterExpiry(period)), field);
    } catch (e) {
      // Sent, the script may have run with its answer lost: settle this connection's charges to this key once connected.
      if (cost > 0 && (e as CommandFailed).sent) this.markUnsettled(totalsKey, keyId, period, field);
      throw e;
    }
    if (result[1] === 1 && cost > 0) {
      const k = `${totalsKey} ${field}`;
      this.answered.set(k, (this.answered.get(k) ?? 0) + cost);
    }
    return result;
  }

  private markUnsettled(totalsKey: string, keyId: string, period: string, field: string): void {
    const k = `${totalsKey} ${field}`;
    if (!this.unsettled.has(k)) this.unsettled.set(k, { keyId, period, totalsKey, field });
  }

  private async sendRefund(id: string): Promise<void> {
    const r = this.pendingRefunds.get(id);
    if (!r) return;
    const base = `${this.prefix}{k:${r.keyId}}`;
    await this.send('irRefund', this.quotaKey(r.keyId, r.period), `${base}:f`, String(r.cost), id);
    this.pendingRefunds.delete(id);
  }

  /**
   * Queues a command for the end of the tick, when the tick's commands are written as one pipeline. Unlike ioredis's
   * auto-pipelining, a tick's pipeline goes out at once rather than after the previous one's answers: under load a
   * request does not wait a round trip for an earlier tick's. Any failure (no connection, timeout, a server error)
   * is a StateUnavailableError.
   */
  private send<T>(name: string, ...args: string[]): Promise<T> {
    if (this.closed) return Promise.reject(new StateUnavailableError(`[state] ${this.label}: the state store is closed`));
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ name, args, resolve: resolve as (v: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.flushTick());
    });
  }

  private flushTick(): void {
    const tick = this.queued;
    this.queued = [];
    const sent = this.client.status === 'ready';
    const fail = (e: unknown): CommandFailed => {
      // A command without an answer leaves the connection in doubt: start a fresh one, which settles what it charged.
      if (/timed out/i.test((e as Error)?.message ?? '') && this.client.status === 'ready') this.client.disconnect(true);
      return new CommandFailed(`[state] ${this.label}: ${describe(e)}`, sent);
    };
    const pipeline = this.client.pipeline() as unknown as Record<string, (...a: string[]) => void> & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const c of tick) pipeline[c.name](...c.args);
    this.counters.pipelines++;
    pipeline.exec().then(
      (results) => {
        let failed: unknown = null;
        tick.forEach((c, i) => {
          const [err, value] = results?.[i] ?? [new Error('no answer'), null];
          if (err) c.reject(fail((failed = err)));
          else c.resolve(value);
        });
        if (failed) this.wentDown(describe(failed), failed instanceof ReplyError);
        else this.answers();
      },
      (e: unknown) => {
        const err = fail(e);
        this.wentDown(describe(e));
        for (const c of tick) c.reject(err);
      },
    );
  }

  private async readDetails(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>> {
    this.usable();
    const out = new Map<string, NoticeDetail>();
    if (findingIds.length === 0) return out;
    const fields = findingIds.flatMap((id) => [`s:${id}`, `a:${id}`]);
    const values = await this.send<(string | null)[]>('hmget', this.noticeKey(provider, batchId), ...fields);
    findingIds.forEach((id, i) => {
      const seen = values[2 * i];
      const ack = values[2 * i + 1];
      const [at, actor, note] = ack ? (JSON.parse(ack) as [string, string | null, string | null]) : [null, null, null];
      out.set(id, { seen_at: seen ?? null, acknowledged_at: at, actor, note });
    });
    return out;
  }

  // ---- connection life ----

  /** The one line an outage writes: the first failure (a lost connection, or commands Redis refuses) after answers. */
  private wentDown(why: string, refused = false): void {
    if (this.closed || this.down !== null) return;
    this.down = why;
    this.log(`[state] ${this.label}: ${refused ? 'refuses commands' : 'unreachable'} (${why}); costing requests answer 503 (nothing charged) until it answers again`);
  }

  /** The one line the end of an outage writes. */
  private answers(): void {
    if (this.closed || this.down === null || this.client.status !== 'ready') return;
    this.down = null;
    this.log(`[state] ${this.label}: reachable again`);
  }

  /** Throws while Redis may evict keys: a counter or revocation it dropped would hand out credits or access again. */
  private usable(): void {
    if (this.evicting !== null) throw new StateUnavailableError(`[state] ${this.label}: ${this.evicting}`);
  }

  private connectionLost(): void {
    if (this.closed) return;
    // The closed connection's totals are final now (its unanswered calls fail); the next one starts its own.
    this.token = newToken();
    this.wentDown('connection closed');
  }

  private async cameBack(): Promise<void> {
    if (this.closed) return;
    await this.checkSettings().catch(() => {});
    this.answers();
    this.settling ??= this.settle().finally(() => {
      this.settling = null;
    });
  }

  /** Refunds what unanswered scripts charged, and sends the refunds that could not be sent; retried on the next reconnect if it fails. */
  private async settle(): Promise<void> {
    const current = `${this.token}:`;
    for (const [k, u] of [...this.unsettled]) {
      if (u.field.startsWith(current)) continue; // its connection is still open; settled when that one closes
      try {
        const back = await this.client.irSettle(this.quotaKey(u.keyId, u.period), u.totalsKey, u.field, String(this.answered.get(k) ?? 0));
        this.unsettled.delete(k);
        this.answered.delete(k);
        if (back > 0) this.log(`[state] ${this.label}: gave back ${back} credit(s) charged by requests whose answer from Redis was lost (key ${u.keyId})`);
      } catch {
        return;
      }
    }
    // Totals of closed connections with nothing lost are no longer needed.
    for (const k of [...this.answered.keys()]) if (!k.slice(k.indexOf(' ') + 1).startsWith(current) && !this.unsettled.has(k)) this.answered.delete(k);
    for (const id of [...this.pendingRefunds.keys()]) {
      try {
        await this.sendRefund(id);
      } catch {
        return;
      }
    }
  }

  /** Reads the persistence settings and the eviction policy (one pipeline); a change of either writes one line. */
  private async checkSettings(): Promise<void> {
    const pipeline = this.client.pipeline();
    for (const name of DURABILITY_SETTINGS) pipeline.config('GET', name);
    pipeline.info('memory');
    const results = (await pipeline.exec()) ?? [];
    // A lost connection is the outage's business, not a setting: keep what was known.
    if (results.some(([err]) => err && !(err instanceof ReplyError))) return;
    this.noteDurability(results.slice(0, DURABILITY_SETTINGS.length).map(([err, pair]) => (err ? undefined : (pair as string[])[1])));
    const [infoErr, info] = results[DURABILITY_SETTINGS.length];
    const policy = infoErr ? undefined : /^maxmemory_policy:(\S+)/m.exec(String(info))?.[1];
    const evicting =
      policy === 'noeviction'
        ? null
        : policy === undefined
          ? `cannot read its maxmemory-policy (INFO memory${infoErr ? `: ${describe(infoErr)}` : ''}); quota counters and revoked keys need maxmemory-policy noeviction`
          : `maxmemory-policy is ${policy}: Redis may evict quota counters and revoked keys; set maxmemory-policy noeviction`;
    // At start an evicting policy refuses the start, which names it: no line of its own.
    if (evicting !== this.evicting && this.settingsTimer !== null) {
      if (evicting !== null) this.log(`[state] ${this.label}: ${evicting}; every state call but refunds answers 503 state_unavailable until it is noeviction`);
      else this.log(`[state] ${this.label}: maxmemory-policy is noeviction again; serving`);
    }
    this.evicting = evicting;
  }

  /** Records what `appendonly`, `appendfsync` and `no-appendfsync-on-rewrite` were read as (undefined: unreadable). */
  private noteDurability([aof, fsync, onRewrite]: (string | undefined)[]): void {
    const durable = aof === 'yes' && fsync === 'always' && onRewrite !== 'yes';
    const note =
      aof === undefined || fsync === undefined
        ? `cannot read the server's persistence settings; acknowledgements need appendonly yes and appendfsync always`
        : durable
          ? 'appendonly yes, appendfsync always'
          : `the server has appendonly ${aof}, appendfsync ${fsync}${onRewrite === 'yes' ? ', no-appendfsync-on-rewrite yes' : ''}; acknowledgements need appendonly yes and appendfsync always${onRewrite === 'yes' ? ' (and no-appendfsync-on-rewrite no)' : ''}`;
    if (durable !== this.durable || note !== this.durabilityNote) {
      if (!durable) this.log(`[state] ${this.label}: acknowledgements answer 503 ack_storage_unavailable: ${note}`);
      else if (this.durabilityNote !== 'not checked yet') this.log(`[state] ${this.label}: acknowledgements are durable again (${note})`);
    }
    this.durable = durable;
    this.durabilityNote = note;
  }
}

/** What makes Redis fsync a write before it replies: `appendonly yes`, `appendfsync always`, and no pause during rewrites. */
const DURABILITY_SETTINGS = ['appendonly', 'appendfsync', 'no-appendfsync-on-rewrite'] as const;

function newToken(): string {
  return randomBytes(6).toString('hex');
}

/** When a month's counter may go: 35 days after the month ends, so a late `remaining` of last month still reads it. */
function counterExpiry(period: string): number {
  const m = /^(\d{4})-(\d{2})$/.exec(period);
  const end = m ? Date.UTC(Number(m[1]), Number(m[2]), 1) : Date.now();
  return end + 35 * DAY_MS;
}

function describe(e: unknown): string {
  const err = e as { code?: string; message?: string };
  return err?.code ?? err?.message ?? String(e);
}
