// The runtime's one error type: every 4xx/5xx body in the API is written from an ApiError, by one handler.

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail?: string;
  /** Extra headers the error response must carry (Retry-After, WWW-Authenticate, Allow). */
  readonly headers?: Record<string, string>;
  /** Extra body fields after error/message/detail (the 409's results and count). */
  readonly extra?: string;

  constructor(status: number, code: string, message: string, opts: { detail?: string; headers?: Record<string, string>; extra?: string } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = opts.detail;
    this.headers = opts.headers;
    this.extra = opts.extra;
  }

  /** The Error body: `{"error","message","detail"?}` plus any pre-serialised extra fields, canonical bytes. */
  bodyText(): string {
    let s = `{"error":${JSON.stringify(this.code)},"message":${JSON.stringify(this.message)}`;
    if (this.detail !== undefined) s += `,"detail":${JSON.stringify(this.detail)}`;
    if (this.extra) s += `,${this.extra}`;
    return s + '}';
  }
}
