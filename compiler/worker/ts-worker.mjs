// Entry of every compiler worker thread: imports the module named in workerData and hands the job to the function
// the URL's fragment names (`stage.ts#buildRange`; `run` without one). Built (build/, JavaScript) it imports the
// built module; from the TypeScript sources (tests) it first registers tsx, whose loader hooks are per thread.
import { parentPort, workerData } from 'node:worker_threads';

try {
  const url = new URL(workerData.module);
  const name = url.hash ? url.hash.slice(1) : 'run';
  url.hash = '';
  if (url.pathname.endsWith('.ts')) (await import('tsx/esm/api')).register();
  const mod = await import(url.href);
  if (typeof mod[name] !== 'function') throw new Error(`${url.pathname} exports no function ${name}`);
  const result = await mod[name](workerData.job);
  parentPort.postMessage({ ok: true, result });
} catch (e) {
  // RegisterError's fields travel as plain data; the parent rebuilds it, so the message still names file and row.
  // Known by its fields, not its class name: a bundle may rename the class.
  const registerMessage = e instanceof Error && typeof e.stage === 'string';
  parentPort.postMessage({ ok: false, error: { message: e?.message ?? String(e), stage: e?.stage, file: e?.file, row: e?.row, registerMessage } });
}
