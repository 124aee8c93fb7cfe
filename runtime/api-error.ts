// The runtime's one error type: every 4xx/5xx body in the API is written from an ApiError, by one handler.
import type { ErrorCode } from './contract/error-codes.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail?: string;
  /** Extra headers the error response must carry (Retry-After, WWW-Authenticate, Allow). */
  readonly headers?: Record<string, string>;
  /** Extra body fields after error/message/detail (the 409's results and count). */
  readonly extra?: string;
  /**
   * The body exactly as the compiler wrote it, sent instead of one made from the fields: a retired ID's 410 carries
   * its tombstone stub. Like a 200, it is the release's answer rather than this request's failure, so it keeps the
   * route's caching headers.
   */
  readonly stub?: Uint8Array;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    opts: { detail?: string; headers?: Record<string, string>; extra?: string; stub?: Uint8Array } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = opts.detail;
    this.headers = opts.headers;
    this.extra = opts.extra;
    this.stub = opts.stub;
  }

  /** What the answer's body is: the stub when there is one, else the Error body. */
  body(): string | Uint8Array {
    return this.stub ?? this.bodyText();
  }

  /** The Error body: `{"error","message","detail"?}` plus any pre-serialised extra fields, canonical bytes. */
  bodyText(): string {
    let s = `{"error":${JSON.stringify(this.code)},"message":${JSON.stringify(this.message)}`;
    if (this.detail !== undefined) s += `,"detail":${JSON.stringify(this.detail)}`;
    if (this.extra) s += `,${this.extra}`;
    return s + '}';
  }
}
