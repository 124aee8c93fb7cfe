// One file of a release fetched from a static host into a local temp name: resumed with a Range request when a
// partial copy is there, hashed while it streams (a pack is hundreds of MiB: never held in memory), checked against
// the size and sha256 its manifest lists, and only then renamed to its real name.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, writeSync } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { dirname } from 'node:path';

/** What the host did for one file, for counts and tests. */
export interface Fetched {
  /** Bytes received over the network for it (a resumed file counts only the rest). */
  bytes: number;
  /** Whether a partial copy was continued with a Range request. */
  resumed: boolean;
}

/** A file the host sent wrong: too short, too long, other bytes, or an answer that is not the file. */
export class FetchRefusal extends Error {
  /** Set when the refused bytes continued a partial copy: then the file is worth one more try, whole. */
  resumed = false;
}

/** An HTTP client for one origin: keep-alive sockets, a deadline per response, optional extra headers. */
export interface Origin {
  base: URL;
  headers: Record<string, string>;
  timeoutMs: number;
  agent: HttpAgent;
}

export function originOf(url: string, sockets: number, timeoutMs: number): Origin {
  const base = new URL(url);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`ORIGIN must be an http(s) URL, got ${JSON.stringify(url)}`);
  const headers: Record<string, string> = {};
  // Credentials in the URL become Basic auth, and are kept out of every message (as runtime/source/http-source.ts).
  if (base.username || base.password) {
    headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64');
    base.username = '';
    base.password = '';
  }
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const Agent = base.protocol === 'https:' ? HttpsAgent : HttpAgent;
  return { base, headers, timeoutMs, agent: new Agent({ keepAlive: true, maxSockets: sockets }) };
}

/** The URL of `path` (relative to the origin's root), each segment percent-encoded. */
const urlOf = (origin: Origin, path: string): URL => new URL(path.split('/').map(encodeURIComponent).join('/'), origin.base);

/** A GET of `path` (optionally from byte `from`); resolves with the response once its headers are in. */
function get(origin: Origin, path: string, from = 0): Promise<IncomingMessage> {
  const url = urlOf(origin, path);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { ...origin.headers, 'accept-encoding': 'identity' };
  if (from > 0) headers.range = `bytes=${from}-`;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, agent: origin.agent }, resolve);
    // A host that stops sending for this long is given up on (the attempt is retried, resuming where it stopped).
    req.setTimeout(origin.timeoutMs, () => req.destroy(new Error(`no data for ${origin.timeoutMs} ms`)));
    req.once('error', reject);
    req.end();
  });
}

/** A whole small file (the index, a manifest), read into memory up to `max` bytes. */
export async function getWhole(origin: Origin, path: string, max: number): Promise<Buffer | null> {
  const res = await get(origin, path);
  if (res.statusCode === 404 || res.statusCode === 410) {
    res.resume();
    return null;
  }
  if (res.statusCode !== 200) {
    res.resume();
    throw new Error(`HTTP ${res.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > max) {
      res.destroy();
      throw new FetchRefusal(`larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function hashInto(hash: Hash, file: string, bytes: number): Promise<void> {
  if (bytes === 0) return;
  for await (const chunk of createReadStream(file, { start: 0, end: bytes - 1, highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

/**
 * Fetches `path` into `dest` through `dest.part`, resuming a partial `.part` with Range. Resolves when `dest` holds
 * exactly `want.bytes` bytes hashing to `want.sha256`; rejects with FetchRefusal when the host's bytes are wrong
 * (the partial copy is then deleted, so the next run starts afresh), or with a plain Error when the transfer broke
 * (the partial copy is kept, so the next attempt resumes it).
 */
export async function fetchFile(origin: Origin, path: string, dest: string, want: { bytes: number; sha256: string }, onBytes: (n: number) => void): Promise<Fetched> {
  const part = `${dest}.part`;
  await mkdir(dirname(dest), { recursive: true });
  let have = (await stat(part).catch(() => null))?.size ?? 0;
  if (have > want.bytes) {
    await rm(part, { force: true });
    have = 0;
  }
  const hash = createHash('sha256');
  let received = 0;
  let resumed = false;
  if (have < want.bytes) {
    const res = await get(origin, path, have);
    let from = 0;
    if (res.statusCode === 206 && have > 0) {
      const m = CONTENT_RANGE.exec(res.headers['content-range'] ?? '');
      if (!m || Number(m[1]) !== have) {
        res.resume();
        throw new Error(`asked for bytes ${have}- and got ${res.headers['content-range'] ?? 'no Content-Range'}`);
      }
      from = have;
      resumed = true;
    } else if (res.statusCode === 416 && have > 0) {
      // The host says the file ends before our partial copy does: it is shorter than the manifest lists.
      res.resume();
      await rm(part, { force: true });
      throw new FetchRefusal(`the host's copy is shorter than the ${want.bytes} bytes the manifest lists (${res.headers['content-range'] ?? 'HTTP 416'})`);
    } else if (res.statusCode !== 200) {
      res.resume();
      if (res.statusCode === 404 || res.statusCode === 410) throw new FetchRefusal(`not on the host (HTTP ${res.statusCode})`);
      throw new Error(`HTTP ${res.statusCode}`);
    }
    // The partial copy's bytes go into the hash first; a 200 (Range ignored) starts the file again.
    if (from > 0) await hashInto(hash, part, from);
    // Each chunk is written as it arrives (a stalled host leaves what it sent on disk, for the next run to resume),
    // synchronously: a write into the page cache takes microseconds, where an asynchronous one is a round trip
    // through libuv's thread pool (two thread wake-ups per chunk, ~6 futex calls; they cost more CPU than the copy,
    // on a machine whose cores are busy receiving and hashing). Not fsynced here: pull flushes each file once it is
    // whole and again before it renames the stamp into place.
    const fh = await open(part, from > 0 ? 'r+' : 'w');
    let at = from;
    let refusal: FetchRefusal | null = null;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        if (at + chunk.length > want.bytes) {
          res.destroy();
          refusal = new FetchRefusal(`the host sent more than the ${want.bytes} bytes the manifest lists`);
          break;
        }
        hash.update(chunk);
        for (let off = 0; off < chunk.length; ) off += writeSync(fh.fd, chunk, off, chunk.length - off, at + off);
        at += chunk.length;
        received += chunk.length;
        onBytes(chunk.length);
      }
    } finally {
      await fh.close();
    }
    if (!refusal && at < want.bytes) {
      // A clean end of a short body: the host's file is truncated (a broken transfer throws inside the loop).
      if (!res.complete) throw new Error(`transfer ended at byte ${at} of ${want.bytes}`);
      refusal = new FetchRefusal(`the host sent ${at} of the ${want.bytes} bytes the manifest lists`);
    }
    if (refusal) {
      await rm(part, { force: true });
      throw refusal;
    }
  } else {
    // A complete partial copy (killed before its rename), or an empty file, which needs no request at all.
    if (want.bytes === 0) await (await open(part, 'w')).close();
    await hashInto(hash, part, have);
  }
  const sha256 = hash.digest('hex');
  if (sha256 !== want.sha256) {
    await rm(part, { force: true });
    const refusal = new FetchRefusal(`sha256 ${sha256} does not match the manifest (${want.sha256})`);
    refusal.resumed = resumed || (have > 0 && have === want.bytes);
    throw refusal;
  }
  await rename(part, dest);
  return { bytes: received, resumed };
}
