// The edge tier's one Worker bundle: built once for the whole run, before any edge test file starts, and handed to
// them by path (`inject('edgeWorker')`). Each file used to bundle the Worker for itself, and each `edge dev` it
// started bundled again; the files and the processes they start now run this one. Kept in a folder of its own,
// removed when the run ends.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorker, WORKER_FILE } from '../../edge/bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Worker bundle's file (worker.mjs), as `register edge build` writes it. */
    edgeWorker: string;
  }
}

export async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-worker-'));
  const file = join(dir, WORKER_FILE);
  writeFileSync(file, (await bundleWorker()).code);
  project.provide('edgeWorker', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
