/** A request the caller can fix: `status` is the HTTP status the API answers with. */
export class MemoryApiError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = 'MemoryApiError';
  }
}
