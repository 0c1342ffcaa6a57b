/** A request the caller can fix: `status` is the HTTP status the API answers with; `fields` name what to fix. */
export class MemoryApiError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 413,
    message: string,
    readonly fields?: Array<{ path: string; message: string }>,
  ) {
    super(message);
    this.name = 'MemoryApiError';
  }
}
