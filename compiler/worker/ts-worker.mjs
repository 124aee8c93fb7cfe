// Entry of every compiler worker thread: TypeScript loader hooks are per thread, so the worker registers tsx
// itself before importing its TypeScript module (named in workerData) and handing the job to the function the
// URL's fragment names (`stage.ts#buildRange`; `run` without one).
import { register } from 'tsx/esm/api';
import { parentPort, workerData } from 'node:worker_threads';

register();
try {
  const url = new URL(workerData.module);
  const name = url.hash ? url.hash.slice(1) : 'run';
  url.hash = '';
  const mod = await import(url.href);
  if (typeof mod[name] !== 'function') throw new Error(`${url.pathname} exports no function ${name}`);
  const result = await mod[name](workerData.job);
  parentPort.postMessage({ ok: true, result });
} catch (e) {
  // RegisterError's fields travel as plain data; the parent rebuilds it, so the message still names file and row.
  parentPort.postMessage({ ok: false, error: { message: e?.message ?? String(e), stage: e?.stage, file: e?.file, row: e?.row, registerMessage: e?.constructor?.name === 'RegisterError' } });
}
