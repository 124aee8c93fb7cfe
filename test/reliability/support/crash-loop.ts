// The crash loop: a `register serve` under acknowledgements and lookups is SIGKILLed at random moments and
// restarted on the same state store (a SQLite file, or a Redis that may be SIGKILLed too); after every restart it must still show everything it confirmed (every
// acknowledgement answered 200, every lookup it answered charged) and nothing it was never asked for.
// Shared by crash-safety.test.ts (200 kills) and scripts/soak.ts (many more).
import { seededRandom } from '../../../generator/random.ts';
import { CRASH_BATCH, type CrashWorld } from './reliability-world.ts';
import { StandbyPool, type StandbyEntry } from './child-server.ts';

/** The crash world's partner quota (reliability-world.ts): credits used = QUOTA - credits_remaining. */
const QUOTA = 10_000_000;
const PAGE = 100;

/** Seeded uniform draws (the generator's sfc32), so a run can be replayed with the seed it prints. */
export const prng = (seed: number): (() => number) => seededRandom(seed, 'crash-loop');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A cycle waits this long at most for its first confirmations; past it, the kill comes anyway (and counts). */
const FIRST_ANSWER_MS = 30_000;

async function until(done: () => boolean, maxMs: number): Promise<void> {
  for (const t0 = performance.now(); !done() && performance.now() - t0 < maxMs; ) await sleep(2);
}

/**
 * What clients were told, across all kills. A server may remember more than it confirmed (a write that became
 * durable just before the kill, its answer lost), never less, and never anything nobody sent.
 */
export class CrashLedger {
  readonly ackAttempted = new Set<string>();
  readonly ackAnswered = new Set<string>();
  /** acknowledged_at as first seen after a restart: the first acknowledgement is the one kept, forever. */
  readonly ackedAt = new Map<string, string>();
  lookupsAttempted = 0;
  lookupsAnswered = 0;
  /** Acknowledgement requests sent and not answered yet (nor failed). */
  acksInFlight = 0;
  next = 0;
  readonly violations: string[] = [];
  readonly requestMs: number[] = [];
  /** Lookups answered 503 `state_unavailable` (allowed only while the state store itself is being killed). */
  stateUnavailable = 0;

  /** `storeMayFail`: the state store itself is killed too, so a lookup may answer 503 `state_unavailable` (charging nothing). */
  constructor(
    readonly world: CrashWorld,
    readonly storeMayFail = false,
  ) {}

  /** A costing answer the loop accepts that confirms nothing: 503 state_unavailable while the store is away. */
  private unconfirmed(res: { status: number; json: any }): boolean {
    if (this.storeMayFail && res.status === 503 && res.json?.error === 'state_unavailable') {
      this.stateUnavailable++;
      return true;
    }
    return false;
  }

  private async getJson(url: string, key: string): Promise<any> {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${url} → ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  }

  /** Checks the promises against a freshly restarted server; `from`/`to` limit the notice pages read (default all). */
  async verify(base: string, label: string, from = 0, to = this.world.findingIds.length): Promise<void> {
    const key = await this.getJson(`${base}/key`, this.world.partner);
    const used = QUOTA - key.key.credits_remaining;
    if (used < this.lookupsAnswered) this.violations.push(`${label}: ${used} credits used but ${this.lookupsAnswered} lookups were answered (a charge was lost)`);
    if (used > this.lookupsAttempted) this.violations.push(`${label}: ${used} credits used but only ${this.lookupsAttempted} lookups were ever sent (a charge was invented)`);
    for (let offset = from; offset < to; offset += PAGE) {
      // Only the pages asked for: after most restarts that is a handful of findings, not the whole feed.
      const page = await this.getJson(`${base}/notices?limit=${Math.min(PAGE, to - offset)}&offset=${offset}`, this.world.opta);
      if (page.batch_id !== CRASH_BATCH) this.violations.push(`${label}: notices batch ${page.batch_id}, expected ${CRASH_BATCH}`);
      for (const f of page.findings as { finding_id: string; acknowledged: boolean; acknowledged_at: string | null }[]) {
        if (f.acknowledged && !this.ackAttempted.has(f.finding_id)) this.violations.push(`${label}: ${f.finding_id} is acknowledged but nobody acknowledged it`);
        if (!f.acknowledged && this.ackAnswered.has(f.finding_id)) this.violations.push(`${label}: ${f.finding_id} was acknowledged (answered 200) but is not any more`);
        if (f.acknowledged) {
          const first = this.ackedAt.get(f.finding_id);
          if (first === undefined) this.ackedAt.set(f.finding_id, f.acknowledged_at!);
          else if (first !== f.acknowledged_at) this.violations.push(`${label}: ${f.finding_id} acknowledged_at changed from ${first} to ${f.acknowledged_at}`);
        }
      }
    }
  }

  private async timed(url: string, init: RequestInit): Promise<{ status: number; json: any } | null> {
    const t0 = performance.now();
    try {
      const res = await fetch(url, init);
      const text = await res.text();
      this.requestMs.push(performance.now() - t0);
      return { status: res.status, json: text ? JSON.parse(text) : null };
    } catch {
      return null; // the server was killed under this request: no answer, no promise made
    }
  }

  /** One client: acknowledgements of new findings, entity lookups and small batches, until `stop.stopped`. */
  async client(base: string, rnd: () => number, stop: { stopped: boolean }, budget: { acks: number }): Promise<void> {
    const { world } = this;
    while (!stop.stopped) {
      const r = rnd();
      if (r < 0.3 && budget.acks > 0 && this.next < world.findingIds.length) {
        budget.acks--;
        const ids = world.findingIds.slice(this.next, this.next + 1 + Math.floor(rnd() * 2));
        this.next += ids.length;
        for (const id of ids) this.ackAttempted.add(id);
        this.acksInFlight++;
        const res = await this.timed(`${base}/notices/ack`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.opta}`, 'content-type': 'application/json' },
          body: JSON.stringify({ finding_ids: ids, actor: 'crash-loop' }),
        });
        this.acksInFlight--;
        if (!res) continue;
        if (res.status === 200) {
          if (JSON.stringify(res.json.finding_ids) !== JSON.stringify([...ids].sort()) || res.json.acknowledged !== ids.length) {
            this.violations.push(`ack ${ids.join(',')} answered 200 with ${JSON.stringify(res.json)}`);
          }
          for (const id of ids) this.ackAnswered.add(id);
        } else if (res.status !== 503) this.violations.push(`ack ${ids.join(',')} answered ${res.status} ${JSON.stringify(res.json)}`);
      } else if (r < 0.85) {
        const id = world.lookupIds[Math.floor(rnd() * world.lookupIds.length)];
        this.lookupsAttempted++;
        const res = await this.timed(`${base}/entities/${id}`, { headers: { authorization: `Bearer ${world.partner}` } });
        if (!res) continue;
        if ([200, 404, 410].includes(res.status)) this.lookupsAnswered++;
        else if (!this.unconfirmed(res)) this.violations.push(`lookup ${id} answered ${res.status} ${JSON.stringify(res.json)}`);
      } else {
        const n = 1 + Math.floor(rnd() * 5);
        const requests = Array.from({ length: n }, () => ({ type: 'entity', id: world.lookupIds[Math.floor(rnd() * world.lookupIds.length)] }));
        this.lookupsAttempted += n;
        const res = await this.timed(`${base}/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.partner}`, 'content-type': 'application/json' },
          body: JSON.stringify({ requests }),
        });
        if (!res) continue;
        if (res.status === 200) this.lookupsAnswered += (res.json.results as { status: number }[]).filter((x) => x.status !== 400).length;
        else if (!this.unconfirmed(res)) this.violations.push(`batch of ${n} answered ${res.status} ${JSON.stringify(res.json)}`);
      }
    }
  }
}

export interface CrashLoopOptions {
  world: CrashWorld;
  /** The `--state` value every server of the loop runs on. */
  state: string;
  /** Beside each cycle's traffic (its random draws, its length): the Redis loop SIGKILLs redis-server at a random moment. */
  alongside?: (rnd: () => number, trafficMs: number) => Promise<void>;
  /** After each kill, before the next server starts: the Redis loop starts redis-server again if it was killed. */
  afterKill?: () => Promise<void>;
  entry: StandbyEntry;
  kills: number;
  seed: number;
  /** Acknowledgement requests per cycle at most (each names one or two new findings). Default 3. */
  acksPerCycle?: number;
  /** Longest traffic before the kill, ms. Default 120. */
  maxTrafficMs?: number;
  /** Share of kills aimed at start-up (lock, recovery, listen) rather than traffic. Default 0.1. */
  startupKillShare?: number;
  /** Every this many cycles, verify every notice page, not just the last cycle's. Default 40. */
  fullCheckEvery?: number;
  /** Concurrent clients during traffic. Default 4. */
  clients?: number;
  log?: (line: string) => void;
}

export interface CrashLoopReport {
  ledger: CrashLedger;
  kills: number;
  startupKills: number;
  /** Waiting for a warm standby, per cycle. */
  takeMs: number[];
  /** go → listening, per restart that got there. */
  readyMs: number[];
  /** Checking the promises after a restart, per cycle. */
  verifyMs: number[];
  cycleMs: number[];
  totalMs: number;
}

export async function runCrashLoop(o: CrashLoopOptions): Promise<CrashLoopReport> {
  const rnd = prng(o.seed);
  const ledger = new CrashLedger(o.world, o.alongside !== undefined);
  const pool = new StandbyPool(o.entry, ['--dist', o.world.dist, '--keys', o.world.keysFile, '--state', o.state, '--port', '0', '--access-log', 'off']);
  const report: CrashLoopReport = { ledger, kills: 0, startupKills: 0, takeMs: [], readyMs: [], verifyMs: [], cycleMs: [], totalMs: 0 };
  const t0 = performance.now();
  let cycleFrom = 0;
  try {
    for (let cycle = 0; cycle < o.kills; cycle++) {
      const c0 = performance.now();
      const server = await pool.take();
      const goAt = performance.now();
      report.takeMs.push(goAt - c0);
      if (rnd() < (o.startupKillShare ?? 0.1)) {
        // Somewhere in start-up: taking over the stale lock, replaying the journal, cutting a torn tail, listening.
        await sleep(rnd() * 60);
        await server.kill();
        report.kills++;
        report.startupKills++;
        report.cycleMs.push(performance.now() - c0);
        continue;
      }
      let base: string;
      try {
        base = await server.ready;
      } catch (e) {
        ledger.violations.push(`cycle ${cycle}: ${(e as Error).message}`);
        break;
      }
      report.readyMs.push(performance.now() - goAt);
      const full = cycle % (o.fullCheckEvery ?? 40) === 0;
      const v0 = performance.now();
      await ledger.verify(base, `after kill ${report.kills}`, full ? 0 : cycleFrom, full ? undefined : ledger.next + 1);
      report.verifyMs.push(performance.now() - v0);
      cycleFrom = ledger.next;
      const stop = { stopped: false };
      const budget = { acks: o.acksPerCycle ?? 3 };
      const clients = Array.from({ length: o.clients ?? 4 }, () => ledger.client(base, rnd, stop, budget));
      // Each kill must have something to lose, however slow the machine: first an acknowledgement (while this
      // cycle's budget still allows one) and a lookup confirmed, then the kill at a random moment after that.
      const acks = ledger.ackAnswered.size;
      const lookups = ledger.lookupsAnswered;
      const noAckLeft = () => (budget.acks === 0 || ledger.next >= o.world.findingIds.length) && ledger.acksInFlight === 0;
      await until(() => (ledger.ackAnswered.size > acks || noAckLeft()) && ledger.lookupsAnswered > lookups, FIRST_ANSWER_MS);
      const trafficMs = rnd() * (o.maxTrafficMs ?? 120);
      await Promise.all([sleep(trafficMs), o.alongside?.(rnd, trafficMs)]);
      stop.stopped = true;
      await server.kill();
      report.kills++;
      await Promise.all(clients);
      await o.afterKill?.();
      report.cycleMs.push(performance.now() - c0);
      if (ledger.violations.length) break;
      if (report.kills % 50 === 0) o.log?.(`[crash-loop] ${report.kills} kills, ${ledger.ackAnswered.size} acks and ${ledger.lookupsAnswered} lookups confirmed`);
    }
  } finally {
    await pool.close();
  }
  report.totalMs = performance.now() - t0;
  return report;
}
