// `register serve --workers N`: N worker processes answer HTTP on one port (Node's cluster module: the primary
// accepts each connection and hands it to a worker in turn), and the primary holds the one state store. Workers
// reach it through the remote driver (state/remote-store.ts), so quota, rate limits and acknowledgements are as
// exact as in one process, while lookups and composition, the CPU-bound part of a request, run on every core.
//
// Failure handling: a worker that dies after it served is replaced; one that dies before it listened (a busy
// port, an unreadable dist) stops the whole server, since its replacement would fail the same way. A worker
// whose primary is gone stops: its state calls could no longer be answered.
import cluster, { type Worker } from 'node:cluster';
import { StateUnavailableError, type StateStore } from './interfaces.ts';
import { openStateStore } from './state/open-state-store.ts';
import { createRemoteStore, serveStore, type StateLink } from './state/remote-store.ts';

export const isClusterWorker = (): boolean => cluster.isWorker;

/** A worker's state store: calls go to the primary over the cluster's IPC channel. */
export function primaryStateStore(writable: boolean): StateStore {
  const link: StateLink = {
    send: (m) => {
      if (!process.send || !process.connected) throw new StateUnavailableError('[state] no channel to the primary');
      process.send(m as object);
    },
    onMessage: (l) => void process.on('message', l),
    onClose: (l) => void process.once('disconnect', l),
  };
  return createRemoteStore(link, { writable });
}

function workerLink(w: Worker): StateLink {
  return {
    send: (m) => {
      if (w.isConnected()) w.send(m as object);
    },
    onMessage: (l) => void w.on('message', l),
    onClose: (l) => void w.once('exit', l),
  };
}

export interface PrimaryOptions {
  workers: number;
  /** State folder, or null for a read-only mirror's in-memory store. */
  state: string | null;
  /** Called once every worker listens, with the port they share (the one chosen when asked for port 0). */
  onListening: (port: number) => void;
  log: (line: string) => void;
}

/**
 * Runs the primary: opens the store (throws what openStateStore throws, before any worker starts), forks the
 * workers (they run this same command and see cluster.isWorker), answers their state calls, and on SIGTERM or
 * SIGINT waits for every worker to finish its in-flight requests before it closes the store and exits 0.
 */
export async function runPrimary(opts: PrimaryOptions): Promise<void> {
  const store = await openStateStore(opts.state);
  const live = new Set<Worker>();
  let listening = 0;
  let othersForked = false;
  let stopping = false;
  let exitCode = 0;

  const finish = async (): Promise<void> => {
    await store.close();
    process.exit(exitCode);
  };
  const stopAll = (code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    if (live.size === 0) void finish();
    for (const w of live) w.process.kill('SIGTERM');
  };
  const fork = (): void => {
    const w = cluster.fork();
    live.add(w);
    serveStore(store, workerLink(w));
    let served = false;
    w.once('listening', (address: { port: number }) => {
      served = true;
      // The others start once the first serves: started together they share the cores while each loads the
      // runtime, and the first answer comes later (measured: ~0.9 s against ~0.7 s to the first 200).
      if (!othersForked) {
        othersForked = true;
        for (let i = 1; i < opts.workers; i++) fork();
      }
      if (++listening === opts.workers) opts.onListening(address.port);
    });
    w.once('exit', (code, signal) => {
      live.delete(w);
      if (stopping) {
        if (live.size === 0) void finish();
        return;
      }
      if (!served) {
        opts.log(`[serve] a worker failed to start (${signal ?? `exit ${code}`}); stopping`);
        stopAll(1);
        return;
      }
      opts.log(`[serve] worker ${w.process.pid} exited (${signal ?? `exit ${code}`}); starting another`);
      fork();
    });
  };
  const onSignal = (signal: string) => {
    if (stopping) return;
    opts.log(`[serve] ${signal}: finishing in-flight requests`);
    stopAll(0);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  fork();
}
