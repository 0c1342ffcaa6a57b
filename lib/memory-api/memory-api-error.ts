/** What is wrong with a request, in the use case's words; the api function answers each with its HTTP status. */
export type MemoryApiErrorKind = 'invalid' | 'forbidden' | 'not_found' | 'conflict' | 'too_large';

/** A request the caller can fix: `kind` says what is wrong, `fields` name what to fix. */
export class MemoryApiError extends Error {
  constructor(
    readonly kind: MemoryApiErrorKind,
    message: string,
    readonly fields?: Array<{ path: string; message: string }>,
  ) {
    super(message);
    this.name = 'MemoryApiError';
  }
}
