// `serve --trust` at the edge: the TRUST var (public keys, `ed25519:…`, comma-separated) turns it on, and the
// rollback mark of common/trust.ts lives in one Durable Object for the deployment (TrustMarkObject, in
// durable-objects.ts with the other classes), so neither an
// isolate evicted nor a redeploy goes back to an older index. edgeTrust() gives the catalog its `trust` and
// `trustMarks` options; the worker (or its composer) only spreads them in.
import { parsePublicKey, trustedKeys, type TrustedKeys } from '../common/signing.ts';
import { decodeMark, encodeMark, type MarkStore } from '../common/trust.ts';
import type { CatalogOptions } from '../runtime/release/catalog.ts';
import { BINDINGS, type EdgeEnv } from './bindings.ts';

/** The one object's name: one mark per deployment, as one dist is served. */
const OBJECT_NAME = 'dist';

/** The MarkStore over the deployment's TrustMarkObject. */
function durableMarkStore(ns: NonNullable<EdgeEnv['TRUST_MARK']>): MarkStore {
  const stub = ns.get(ns.idFromName(OBJECT_NAME));
  const where = `Durable Object ${BINDINGS.trustMark}/${OBJECT_NAME}`;
  return {
    where,
    load: async () => {
      const text = await stub.load();
      return text === null ? null : decodeMark(text);
    },
    save: async (mark) => stub.save(encodeMark(mark)),
  };
}

/** The keys of TRUST, refused naming the var when one is not a key. */
async function trustOf(value: string): Promise<TrustedKeys> {
  const keys = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (keys.length === 0) throw new Error(`[edge] ${BINDINGS.trust} names no key`);
  return trustedKeys(await Promise.all(keys.map((k) => parsePublicKey(k).catch((e: Error) => {
    throw new Error(`[edge] ${BINDINGS.trust}: ${e.message}`);
  }))));
}

/**
 * The catalog's trust options for `env`: none without TRUST; with it, the keys (parsed when the first index is
 * read: a bad key answers 503 naming TRUST) and the mark in TRUST_MARK. TRUST without TRUST_MARK is refused at once.
 */
export function edgeTrust(env: EdgeEnv): Pick<CatalogOptions, 'trust' | 'trustMarks'> {
  if (!env.TRUST) return {};
  if (!env.TRUST_MARK) throw new Error(`[edge] ${BINDINGS.trust} is set but the Durable Object binding ${BINDINGS.trustMark} is not: the rollback mark needs it`);
  return { trust: trustOf(env.TRUST), trustMarks: durableMarkStore(env.TRUST_MARK) };
}
