/**
 * Which Bedrock Runtime errors are worth asking again later, for the Converse adapter
 * (bedrock-converse-model.adapter.ts) and the embeddings adapter (titan-embeddings.adapter.ts). Its own module,
 * free of any SDK command: the api bundles the embeddings adapter without the Converse one.
 */

/**
 * Errors worth asking again later: throttling, timeouts, 5xx, a model not ready, and
 * ModelErrorException (HTTP 424, "The request failed due to an error while processing the
 * model": the model failed this time, the request was valid;
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
 */
export const RETRYABLE_BEDROCK_ERRORS: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'ModelTimeoutException',
  'InternalServerException',
  'ModelNotReadyException',
  'ModelErrorException',
  'TimeoutError',
  'RequestTimeout',
]);

/** A Bedrock Runtime error worth asking again later: a retryable name, a 5xx or 429, or a dropped connection. */
export function isTransientBedrockError(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
  const network = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE'].includes(
    (error as NodeJS.ErrnoException).code ?? '',
  );
  return RETRYABLE_BEDROCK_ERRORS.has((error as Error).name) || status >= 500 || status === 429 || network;
}
