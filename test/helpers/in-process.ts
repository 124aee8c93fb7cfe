// Route specs call the runtime's app in process, as Hono's app.request does: the whole app openRuntime composes (API,
// pages, operations), with no socket and no adapter. Each opened app gets an origin of its own, so a spec's URLs read
// as they would against a server, and the test clients (api-client.ts, validating-fetch.ts) hand that origin's
// requests to the app's fetch; they validate every answer against the OpenAPI document either way. Tests whose
// subject is the socket (the adapter, coding on the wire, slow clients, other processes) start a real server.
import type { App } from '../../runtime/app.ts';
import { openRuntime, type OpenedRuntime, type RuntimeOptions } from '../../runtime/server.ts';

/** The apps open in this worker, by origin. */
const apps = new Map<string, App>();
let opened = 0;

export interface InProcessRuntime extends OpenedRuntime {
  /** The origin that stands for this app: `${url}/api/v1/…` is answered by it. */
  url: string;
}

/** openRuntime, reachable through fetchAny at the returned `url`; close() closes the runtime and the origin. */
export async function openInProcess(opts: RuntimeOptions): Promise<InProcessRuntime> {
  const rt = await openRuntime(opts);
  // `.test` is reserved (RFC 2606): a URL that slipped past fetchAny to the network fails to resolve, never reaches a host.
  const url = `http://in-process-${++opened}.test`;
  apps.set(url, rt.app);
  return {
    ...rt,
    url,
    async close() {
      apps.delete(url);
      await rt.close();
    },
  };
}

/** fetch for the test clients: an in-process origin's requests go to its app's fetch, any other to the network. */
export function fetchAny(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const href = input instanceof Request ? input.url : String(input);
  const app = apps.get(new URL(href).origin);
  return app ? app.fetch(new Request(input, init)) : fetch(input, init);
}
