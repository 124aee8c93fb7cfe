// A test Worker that exposes the edge's drivers to the contract suites run from Node: each call names a driver
// (`state`: edgeStateStore, `auth`: edgeGate's key check, as `authenticate`), one of its methods and the arguments, and is answered with
// what the call resolved to or the error it threw (name and message). The drivers run as in the Worker, over the real
// Durable Object classes on workerd; only the names are scoped, so that each contract case starts on objects of its
// own (or, given none, the Worker's own names). It talks to the StateStore and Gate interfaces alone, not
// to the objects' methods.
import type { EdgeEnv } from '../../../edge/bindings.ts';
import { edgeGate, edgeStateStore } from '../../../edge/edge-state.ts';

export { KeyDirectory, KeyObject, ProviderObject } from '../../../edge/durable-objects.ts';

/** A call as Node sends it: Dates as { $date }, and what comes back: Maps as { $map: entries }. */
type Call = { driver: 'state' | 'auth'; scope: string | null; method: string; args: unknown[] };

const revive = (v: unknown): unknown => (v !== null && typeof v === 'object' && '$date' in v ? new Date((v as { $date: string }).$date) : v);
const encode = (v: unknown): unknown => (v instanceof Map ? { $map: [...v.entries()] } : v);

/** `env` with its namespaces' names prefixed by `scope`: objects of one scope never meet another's. */
function scoped(env: EdgeEnv, scope: string): EdgeEnv {
  const within = <T extends EdgeEnv['KEYS' | 'PROVIDERS' | 'DIRECTORY']>(ns: T): T =>
    ({ idFromName: (name: string) => ns.idFromName(`${scope}/${name}`), get: (id: unknown) => ns.get(id) }) as T;
  return { ...env, KEYS: within(env.KEYS), PROVIDERS: within(env.PROVIDERS), DIRECTORY: within(env.DIRECTORY) };
}

async function one(env: EdgeEnv, call: Call): Promise<unknown> {
  const on = call.scope === null ? env : scoped(env, call.scope);
  // The key contract asks a served key store's `authenticate`; at the edge that is the gate's key check.
  const driver = (call.driver === 'state' ? edgeStateStore(on) : { authenticate: edgeGate(on).check }) as unknown as Record<string, (...a: unknown[]) => unknown>;
  try {
    const member = driver[call.method];
    // A property (StateStore.writable) is read, a method called.
    const value = typeof member === 'function' ? await member(...call.args.map(revive)) : member;
    return { value: encode(value) ?? null };
  } catch (e) {
    return { error: { name: (e as Error).name, message: (e as Error).message } };
  }
}

export default {
  // A batch of calls (those Node made in one tick), all made at once here: a race the contract starts in Node is
  // a race on the objects, without a connection per call.
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    const calls = (await request.json()) as Call[];
    return Response.json(await Promise.all(calls.map((c) => one(env, c))));
  },
};
