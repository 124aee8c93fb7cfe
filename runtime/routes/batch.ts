// POST /batch: each item runs through the same function as its single endpoint and yields its own {status, body};
// structurally invalid items answer 400 in place and cost nothing; an item that cannot be answered (a damaged file,
// an origin that is down) answers 503 in place and its lookup is refunded; the whole batch is one request for the
// rate limit.
import type { Include } from '../../common/ids.ts';
import { ApiError } from '../api-error.ts';
import { costingErrors, COST_HEADERS, ok, responseRef } from '../contract/http-parts.ts';
import { ExternalId, ReepId } from '../contract/parameters.ts';
import { bodyChecker, parseInclude, valueChecker } from '../contract/request-check.ts';
import { BatchItem, BatchRequest, BatchResponse, ref } from '../contract/schemas.ts';
import { MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES } from '../../common/request-limits.ts';
import { concat, concatToSend } from '../../common/bytes.ts';
import { composeAnswer, entityQuestion, cachedAnswer, liveEntity, type EntityQuestion } from '../entity-answer.ts';
import { isPromise, type MaybePromise, type ShardSource } from '../interfaces.ts';
import { readJsonBody } from '../read-body.ts';
import { checkProvider, resolveItem } from '../resolve-answer.ts';
import { defineRoute, type Body, type Reply, type RouteDef } from '../route.ts';
import type { LiveEntity, Release } from '../release/open-release.ts';
import { createConcurrencyLimit } from '../concurrency-limit.ts';

/** The batch as a whole: its items are checked one by one (checkItem), each answering its own 400 in place. */
const checkBatch = bodyChecker(BatchRequest, { itemsInPlace: 'requests' });
const checkItem = bodyChecker(BatchItem);
// A batch item's IDs checked as the paths' parameters are.
const checkRegisterId = valueChecker(ReepId);
const checkExternalId = valueChecker(ExternalId);
const COMMA = new Uint8Array([44]);

/** An item as validated: an entity lookup (composed straight into the batch's parts), another lookup, or its 400. */
type EntityPlan = { entity: EntityQuestion };
type OtherPlan = { run: () => MaybePromise<Reply> } | { error: ApiError };
type Planned = EntityPlan | OtherPlan;

function plan(release: Release, raw: unknown, include: ReadonlySet<Include>, lang: string | null): Planned {
  try {
    const item = checkItem(raw);
    // What the schema leaves to code: which fields each type needs.
    if (item.type === 'entity') {
      if (typeof item.id !== 'string') throw new ApiError(400, 'invalid_body', 'An entity item needs id.');
      const id = checkRegisterId(item.id);
      return { entity: entityQuestion(release, id, include, lang) };
    }
    const externalId = item.external_id ?? item.id;
    if (typeof item.provider !== 'string' || typeof externalId !== 'string') {
      throw new ApiError(400, 'invalid_body', 'A resolve item needs provider and external_id (or id).');
    }
    checkProvider(release, item.provider);
    checkExternalId(externalId);
    const args = { provider: item.provider, externalId, namespace: item.namespace ?? '', type: item.entity_type ?? null, include, lang };
    return { run: () => resolveItem(release, args) };
  } catch (e) {
    if (e instanceof ApiError) return { error: e };
    throw e;
  }
}

const enc = new TextEncoder();
const CLOSE = enc.encode('}');
const STATUS_HEADS = new Map<number, Uint8Array>();
/** `{"status":N,"body":` (a handful of statuses, encoded once each). */
function statusHead(status: number): Uint8Array {
  let h = STATUS_HEADS.get(status);
  if (!h) STATUS_HEADS.set(status, (h = enc.encode(`{"status":${status},"body":`)));
  return h;
}
const asBytes = (body: Body): Uint8Array => (typeof body === 'string' ? enc.encode(body) : Array.isArray(body) ? concat(body) : (body ?? new Uint8Array()));

/**
 * Entity items looked up ahead of the one being composed. When reads go to the thread pool (the disk is being hit),
 * a window of them overlaps their reads instead of paying one round trip after another; a small window keeps one
 * batch from filling the pool's queue ahead of other clients' single lookups.
 */
const LOOKAHEAD = 8;

type Looked = { entity: LiveEntity } | { failed: unknown };
const found = (entity: LiveEntity): Looked => ({ entity });
const failed = (failed: unknown): Looked => ({ failed });
/** An entity item's lookup: at once when its index entry and shard are ready, else its promise (which never rejects). */
const lookUp = (release: Release, p: EntityPlan): MaybePromise<Looked> => {
  const e = liveEntity(release, p.entity.id);
  return isPromise(e) ? e.then(found, failed) : found(e);
};

/** The batch being composed: its release, its parts, and how to answer an item that fails. */
interface Composing {
  release: Release;
  /** Slices of the items composed since the last flush (views of shards and of shared bytes). */
  out: Uint8Array[];
  /** Bytes in `out`, and how many of its slices are counted in it. */
  waiting: number;
  counted: number;
  /** Pieces of the answer already joined (see FLUSH_BYTES). */
  pieces: Uint8Array[];
  /** The core's mapping of a failure to its ApiError (and log line): Services.failure. */
  failure: (e: unknown) => ApiError;
  /** Items answered 503 in place, whose lookups are refunded. */
  failed: number;
}

/**
 * Composed items are joined into a piece of their own once this many bytes are waiting, and a batch that made
 * pieces is sent as them. What one batch holds is then about its answer's size: without this, a 100-item batch of
 * the largest entity the compiler accepts (~42 MB of answer) held every shard it read, some 700,000 views of them,
 * and the joined answer all at once (+136 MB of RSS, measured; docs/integrity.md). An ordinary batch (~100 KB)
 * never reaches it and is joined once, as before.
 */
const FLUSH_BYTES = 1024 * 1024;

/** Joins the waiting slices into one piece when they hold FLUSH_BYTES or more; they (and their shards) are then garbage. */
function flushIfLarge(b: Composing): void {
  // Only the slices pushed since the last call are added up: the batch's parts are counted once, not per item.
  for (let i = b.counted; i < b.out.length; i++) b.waiting += b.out[i].length;
  b.counted = b.out.length;
  if (b.waiting < FLUSH_BYTES) return;
  b.pieces.push(concat(b.out));
  b.out.length = 0;
  b.waiting = 0;
  b.counted = 0;
}

/**
 * Pushes one item's `{status, body}` onto the parts as byte slices: entity bodies pass through as the compiler wrote
 * them, and are kept for the next request that asks the same (entity-answer.ts composeAnswer).
 */
function entityItem(p: EntityPlan, looked: Looked, b: Composing): void {
  if ('failed' in looked) return failedItem(looked.failed, b);
  const at = b.out.length;
  try {
    b.out.push(statusHead(200));
    composeAnswer(b.release, p.entity, looked.entity, b.out);
    b.out.push(CLOSE);
  } catch (e) {
    // A shard that passed its checksum yet does not compose: drop what was pushed of it, answer it in place.
    b.out.length = at;
    failedItem(e, b);
  }
}

/** The same for an item that is not an entity lookup: its 400, or its own run. */
async function otherItem(p: OtherPlan, b: Composing): Promise<void> {
  if ('error' in p) {
    b.out.push(statusHead(p.error.status), enc.encode(p.error.bodyText()), CLOSE);
    return;
  }
  try {
    const r = await p.run();
    b.out.push(statusHead(r.status), asBytes(r.body), CLOSE);
  } catch (failed) {
    failedItem(failed, b);
  }
}

/**
 * An item's failure in place: a 4xx as its endpoint answers it (a retired ID's 410 carries the compiler's stub);
 * anything else is 503 with the Error body the core maps it to, and costs nothing. One bad item never fails the batch.
 */
function failedItem(e: unknown, b: Composing): void {
  const err = b.failure(e);
  if (err.status < 500) b.out.push(statusHead(err.status), asBytes(err.body()));
  else {
    b.failed++;
    b.out.push(statusHead(503), enc.encode((err.status === 503 ? err : new ApiError(503, err.code, err.message)).bodyText()));
  }
  b.out.push(CLOSE);
}

/**
 * The batch's body, items in order. An entity whose index bucket and shard are ready is composed without a
 * promise; otherwise its lookup and those of up to LOOKAHEAD items after it start together and are awaited in turn.
 */
async function compose(release: Release, planned: Planned[], failure: (e: unknown) => ApiError): Promise<Reply> {
  const parts: Uint8Array[] = [enc.encode('{"results":[')];
  const b: Composing = { release, out: parts, waiting: 0, counted: 0, pieces: [], failure, failed: 0 };
  const ahead: (MaybePromise<Looked> | undefined)[] = [];
  for (let i = 0; i < planned.length; i++) {
    if (i) parts.push(COMMA);
    const p = planned[i];
    if (!('entity' in p)) {
      await otherItem(p, b);
      flushIfLarge(b);
      continue;
    }
    const kept = cachedAnswer(release, p.entity);
    if (kept) {
      parts.push(statusHead(200), kept, CLOSE);
      continue;
    }
    let looked = ahead[i] ?? lookUp(release, p);
    ahead[i] = undefined;
    if (isPromise(looked)) {
      for (let j = i + 1; j < Math.min(planned.length, i + LOOKAHEAD); j++) {
        const q = planned[j];
        // An item whose body is kept needs no read: it is answered from the cache when its turn comes.
        if ('entity' in q && !cachedAnswer(release, q.entity)) ahead[j] ??= lookUp(release, q);
      }
      looked = await looked;
    }
    entityItem(p, looked, b);
    flushIfLarge(b);
  }
  parts.push(enc.encode(`],"count":${planned.length}}`));
  if (b.pieces.length === 0) return { status: 200, body: concatToSend(parts), refund: b.failed };
  if (parts.length) b.pieces.push(concat(parts));
  return { status: 200, body: b.pieces, refund: b.failed };
}

/**
 * Batches composed at once (per app) over a source whose reads are mostly ready (a local dist). Unlimited, every
 * open batch advanced item by item in turn (each await lets the others run), so all of them finished together at
 * the end and all their partial responses were alive at once: V8 promoted them and marked them again. Two at a
 * time, a batch's garbage dies young, and answers leave in arrival order. Measured on the full-size dist, 50
 * connections, one process: ~15% more batches per second and p99 ~95 ms instead of ~135-185 ms. Two rather than
 * one, so a batch waiting on its reads does not idle the loop; reads that go to the thread pool were no slower at
 * one, two or four.
 */
const LOCAL_BATCHES_AT_ONCE = 2;
/**
 * Over a source that is a network away (a mirror reading a CDN), a batch mostly waits on its fetches, and batches
 * overlapping those waits is what keeps throughput up; the bound only caps memory (~90 KB of answer each).
 */
const REMOTE_BATCHES_AT_ONCE = 64;

export interface BatchOptions {
  /** Batches composed at once (default LOCAL_BATCHES_AT_ONCE). */
  atOnce?: number;
}

/** The batch options for an app reading `source`: a local one's batches are CPU work, a remote one's mostly wait. */
export const batchOptionsFor = (source: ShardSource): BatchOptions => ({ atOnce: source.local ? LOCAL_BATCHES_AT_ONCE : REMOTE_BATCHES_AT_ONCE });

export function batchRoutes(maxBodyBytes: number, opts: BatchOptions = {}): RouteDef[] {
  const gate = createConcurrencyLimit(opts.atOnce ?? LOCAL_BATCHES_AT_ONCE);
  return [
    defineRoute({
      method: 'POST',
      path: '/batch',
      auth: true,
      operation: {
        operationId: 'batch',
        tag: 'lookup',
        summary: 'Many entity and resolve lookups in one request',
        description:
          'One lookup per structurally valid entity or resolve item; the rate limiter counts the batch as one ' +
          `request. More than ${MAX_BATCH_ITEMS} items: 400 \`batch_too_large\`; more than ${MAX_BATCH_RESOLVES} resolve items: 400 ` +
          '`resolve_batch_too_large` (both name the limit); empty `requests`: 400 `empty_batch`; malformed body: 400 ' +
          '`invalid_body`; bad shared include: 400 `unknown_include`. No quota is consumed on these rejections. If the ' +
          'key has fewer credits than the batch needs, the whole batch is 402 and nothing is charged. An item that ' +
          'cannot be answered is `{status: 503, body: Error}` in place and is refunded: `X-Register-Credits-Remaining` ' +
          'counts only the items answered. Memory: an entity is at most 256 KiB as compiled, so one batch holds at ' +
          'most about 100 × 0.5 MiB of answer while it is composed (docs/integrity.md states the budget the test ' +
          'holds it to).',
        cost: 'per_item',
        requestBody: BatchRequest,
        responses: {
          '200': ok('One result per item, in request order.', ref(BatchResponse), COST_HEADERS),
          ...costingErrors(checkBatch.codes),
          '413': responseRef('PayloadTooLarge'),
        },
      },
      async prepare(c) {
        const b = checkBatch(await readJsonBody(c.request, maxBodyBytes));
        const include = parseInclude(b.include);
        const lang = b.lang ?? null;
        const planned = b.requests.map((r) => plan(c.release, r, include, lang));
        const cost = planned.filter((p) => !('error' in p)).length;
        return {
          cost,
          run: () => gate.run(() => compose(c.release, planned, c.services.failure)),
        };
      },
    }),
  ];
}
