// The compiler's and CLI's one error type: a message that names the stage, the file and the row.

export class RegisterError extends Error {
  constructor(
    readonly stage: string,
    message: string,
    readonly file?: string,
    readonly row?: number,
  ) {
    super(`[${stage}] ${file ? file + (row !== undefined ? ` row ${row}` : '') + ': ' : ''}${message}`);
  }
}
