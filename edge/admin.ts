// What the admin routes (runtime/routes/admin.ts, routes of the one app) act on at the edge: the deployment's list of
// keys in the KeyDirectory object, and each key's record in its own KeyObject, which is what a request's check reads.
// A key's stats are the calls its object answered since it was loaded: what the Durable Object requests per lookup
// are measured by.
import type { AdminKeys } from '../runtime/routes/admin.ts';
import type { EdgeEnv } from './bindings.ts';
import { keyObject } from './edge-state.ts';

export function edgeAdminKeys(env: EdgeEnv): AdminKeys {
  const directory = () => env.DIRECTORY.get(env.DIRECTORY.idFromName('keys'));
  return {
    list: () => directory().list(),
    async insert(entry) {
      if (!(await directory().insert(entry))) return false;
      // The key's own object is what a request's check reads: the key works from the moment this resolves.
      await keyObject(env, entry.id).create(entry);
      return true;
    },
    async revoke(id) {
      const entry = await keyObject(env, id).revoke();
      if (entry) await directory().update(entry);
      return entry;
    },
    stats: (id) => keyObject(env, id).stats(),
  };
}
