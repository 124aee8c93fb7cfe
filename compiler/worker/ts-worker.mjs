// Entry of every compiler worker thread: TypeScript loader hooks are per thread, so the worker registers tsx
// itself before importing its TypeScript module (named in workerData) and handing it the job.
import { register } from 'tsx/esm/api';
import { parentPort, workerData } from 'node:worker_threads';

register();
try {
  const mod = await import(workerData.module);
  const result = await mod.run(workerData.job);
  parentPort.postMessage({ ok: true, result });
} catch (e) {
  // RegisterError's fields travel as plain data; the parent rebuilds it, so the message still names file and row.
  parentPort.postMessage({ ok: false, error: { message: e?.message ?? String(e), stage: e?.stage, file: e?.file, row: e?.row, registerMessage: e?.constructor?.name === 'RegisterError' } });
}
