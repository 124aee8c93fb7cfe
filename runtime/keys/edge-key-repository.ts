// The keys of an edge deployment (`register keys … --edge URL`), through its admin route (edge/admin.ts) with the
// admin token: the same KeyRepository the keys file and the state stores implement, so `keys add|list|revoke` are
// the same commands. A new key's entry is made here, with the secret's hash: the secret itself never leaves the CLI.
import { RegisterError } from '../../common/errors.ts';
import type { KeyEntry, KeyRepository } from '../interfaces.ts';

export function edgeKeyRepository(baseUrl: string, token: string): KeyRepository {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new RegisterError('keys', `--edge must be the deployment's URL (http:// or https://), got ${JSON.stringify(baseUrl)}`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new RegisterError('keys', `--edge must be an http(s) URL, got ${base.protocol}`);
  const label = `edge ${base.origin}`;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; value: unknown }> => {
    let res: Response;
    try {
      res = await fetch(new URL(`/_admin/${path}`, base), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      throw new RegisterError('keys', `${label} cannot be reached: ${(e as Error).message}`);
    }
    const text = await res.text();
    let value: unknown = null;
    try {
      value = JSON.parse(text);
    } catch {}
    if (res.status === 401) throw new RegisterError('keys', `${label} refused the admin token (REGISTER_EDGE_ADMIN_TOKEN)`);
    if (res.status >= 400 && res.status !== 404 && res.status !== 409) {
      throw new RegisterError('keys', `${label} answered ${res.status}: ${(value as { message?: string } | null)?.message ?? text.slice(0, 200)}`);
    }
    return { status: res.status, value };
  };
  return {
    label,
    entries: async () => ((await call('GET', 'keys')).value as { entries: unknown[] }).entries,
    insert: async (entry: KeyEntry) => (await call('POST', 'keys', entry)).status === 201,
    async revoke(id) {
      const { status, value } = await call('POST', `keys/${id}/revoke`);
      return status === 404 ? null : (value as KeyEntry);
    },
    version: async () => ((await call('GET', 'keys')).value as { version: string }).version,
    close: async () => {},
  };
}
