// The runtime's one error type, and the one function that makes an answer of it: every 4xx/5xx the server sends (the
// router's, the operational and page routes', the Node adapter's refusals before routing) is written by errorReply.
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

const JSON_TYPE = 'application/json; charset=utf-8';

/** The answer to `err` before the request's own headers frame it: its status, body and headers. */
export function errorReply(err: ApiError): { status: number; body: string | Uint8Array; headers: Record<string, string> } {
  return { status: err.status, body: err.body(), headers: err.headers ? { 'content-type': JSON_TYPE, ...err.headers } : { 'content-type': JSON_TYPE } };
}
