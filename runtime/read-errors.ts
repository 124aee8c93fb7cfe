// Why a compiled file could not be used: the domain errors the release readers and shard sources throw. They carry
// where and what for the operator's log; runtime/app.ts alone turns them into answers (503, nothing charged), so
// no file name or reason ever reaches a response.

/**
 * A compiled file failed a check (checksum, sha256, size, structure), or is missing or shorter than its records
 * say. The answer is 503 `artefact_corrupt` until the dist is repaired: never other bytes.
 */
export class ArtefactError extends Error {
  constructor(
    /** The file as its source names it (fileOf): a path on disk or a URL, never credentials. */
    readonly file: string,
    /** The check that failed, e.g. `crc32 of bucket 12 does not match its directory entry`. */
    readonly check: string,
    /** What the request asked for, when the failure concerns one ID (it goes into the answer's `detail`). */
    readonly subject?: string,
  ) {
    super(`${file}: ${check}`);
    this.name = 'ArtefactError';
  }

  /** The same failure, now known to concern `subject` (an entity ID). */
  about(subject: string): ArtefactError {
    return this.subject === subject ? this : new ArtefactError(this.file, this.check, subject);
  }
}

/**
 * A release refused by `serve --trust`: its signature (or index.json's) is missing, wrong, from an untrusted key,
 * expired or older than one served. Answered like any failed check (503 `artefact_corrupt`), but the catalog logs it
 * once when it first refuses it, not once per answer: it is a state of the dist, like an origin's outage.
 */
export class UntrustedError extends ArtefactError {
  constructor(file: string, check: string) {
    super(file, check);
    this.name = 'UntrustedError';
  }
}

/**
 * The mirror's origin could not give a file: unreachable, timed out, or answered 5xx (or another status a static host
 * should not send). Not evidence of damage: the answer is 503 `upstream_unavailable`, and the next request tries again.
 */
export class UpstreamError extends Error {
  constructor(
    /** The URL asked for (credentials are never part of it). */
    readonly url: string,
    /** What went wrong, e.g. `timed out after 10000 ms` or `HTTP 502`. */
    readonly reason: string,
    /**
     * The origin itself failed (unreachable, timed out, 5xx), which its source reports once when it starts and once
     * when it ends, rather than a reply to this one request that made no sense.
     */
    readonly outage = false,
  ) {
    super(`${url}: ${reason}`);
    this.name = 'UpstreamError';
  }
}

/** How an ArtefactError names a file read through a ShardSource: its path on disk or its URL. */
export const fileOf = (source: { readonly label: string; where?(path: string): string }, path: string): string =>
  source.where ? source.where(path) : `${source.label} ${path}`;

/**
 * A read that failed, as the error the release layer throws: an ArtefactError or UpstreamError passes through (the
 * source already knew), anything else (EIO, EACCES, a refused path) means the file cannot be used as it is.
 */
export function readFailure(err: unknown, file: string): ArtefactError | UpstreamError {
  if (err instanceof ArtefactError || err instanceof UpstreamError) return err;
  return new ArtefactError(file, `unreadable (${(err as Error)?.message ?? String(err)})`);
}
