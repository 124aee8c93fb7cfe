// The output floor: what merely writing a compiled release costs, with no compile work in front of it. A compile
// must at least write every file of dist/<stamp>/ (public and private), hash it for the manifest and fsync it; this
// writes the same number of files of the same sizes, from a buffer of real shard bytes, with the compiler's write
// size (4 MiB), one sha256 per file and an fsync per file, into a scratch folder on the same file system. Neither
// write(2) nor sha256 runs faster or slower on other bytes, so the figure is the compiled release's and nothing else.
//
// It is reported beside the input floor because together they bound how close to the input floor any compile can
// come: the compile ratio target (≤ 4× the input floor) has to fit both reading and writing in it.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR } from '../../common/dist-layout.ts';
import type { PartManifest } from '../../compiler/dist-manifest.ts';

export interface OutputFloor {
  /** The compiled folder whose files were matched, dist/<stamp>. */
  stampDir: string;
  files: number;
  bytes: number;
  wallMs: number;
  cpuMs: number;
  /** CPU of sha256 over the same bytes alone, in memory (part of cpuMs). */
  hashCpuMs: number;
}

/** The compiler's write size (ContentFileWriter's buffer in the shard packs). */
const WRITE_BYTES = 4 * 1024 * 1024;

/**
 * Every file the compile wrote under `stampDir`, with its size, as its public and private manifests list them (the
 * manifests themselves, a few KiB, are left out).
 */
function filesListed(stampDir: string): { path: string; bytes: number }[] {
  const out: { path: string; bytes: number }[] = [];
  for (const part of [PUBLIC_DIR, PRIVATE_DIR]) {
    const manifest = JSON.parse(readFileSync(join(stampDir, part, MANIFEST_FILE), 'utf8')) as Pick<PartManifest, 'files'>;
    for (const [path, f] of Object.entries(manifest.files)) out.push({ path: join(stampDir, part, path), bytes: f.bytes });
  }
  return out;
}

/** A write buffer filled from the largest file (a shard pack at any real size), so the hashed bytes are real output. */
function sampleBuffer(files: { path: string; bytes: number }[]): Buffer {
  const buf = Buffer.alloc(WRITE_BYTES, 0x20);
  const largest = files.reduce((a, b) => (b.bytes > a.bytes ? b : a), files[0]);
  if (largest) {
    const fd = openSync(largest.path, 'r');
    try {
      readSync(fd, buf, 0, Math.min(buf.length, largest.bytes), 0);
    } finally {
      closeSync(fd);
    }
  }
  return buf;
}

const cpuMsSince = (c0: NodeJS.CpuUsage): number => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

/** Writes files matching those `stampDir`'s manifests list under `scratch` (deleted before and after) and measures it. */
export function measureOutputFloor(stampDir: string, scratch: string): OutputFloor {
  const files = filesListed(stampDir);
  if (files.length === 0) throw new Error(`output floor: no files under ${stampDir}`);
  const buf = sampleBuffer(files);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  let bytes = 0;
  try {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < files.length; i++) {
      const fd = openSync(join(scratch, `f${i}`), 'w');
      try {
        const hash = createHash('sha256');
        for (let left = files[i].bytes; left > 0; ) {
          const n = Math.min(left, buf.length);
          hash.update(buf.subarray(0, n));
          for (let at = 0; at < n; ) at += writeSync(fd, buf, at, n - at);
          left -= n;
        }
        hash.digest();
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      bytes += files[i].bytes;
    }
    const wallMs = performance.now() - t0;
    const cpuMs = cpuMsSince(c0);
    // The hash's share, over the same byte count in memory: what a faster hash or none could save at most.
    const h0 = process.cpuUsage();
    for (const f of files) {
      const hash = createHash('sha256');
      for (let left = f.bytes; left > 0; left -= buf.length) hash.update(buf.subarray(0, Math.min(left, buf.length)));
      hash.digest();
    }
    const hashCpuMs = cpuMsSince(h0);
    return { stampDir, files: files.length, bytes, wallMs: Math.round(wallMs), cpuMs: Math.round(cpuMs), hashCpuMs: Math.round(hashCpuMs) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
