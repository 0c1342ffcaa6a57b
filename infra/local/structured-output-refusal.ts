/**
 * A Converse responder for tests: Bedrock refusing structured output for a model that lists it.
 * Since August 2026 Bedrock answers a request with `outputConfig` for some Claude models with
 * a ValidationException (HTTP 400) "The model returned the following errors:
 * output_config.format: Extra inputs are not permitted" (vectorize-io/hindsight#3300 with
 * Claude Haiku 4.5 in ap-southeast-2, presenton/presenton#939 with Claude Sonnet 5). Wrapped
 * around a responder, every request carrying `outputConfig` gets that refusal and every other
 * one the wrapped responder's answer, so a test shows what the model adapter does with it
 * (lib/model/bedrock-converse-model.adapter.ts: a forced tool from then on).
 */
import type { ConverseError, Responder } from './converse-protocol.js';
import { offlineResponder } from './converse-server.js';

export const OUTPUT_CONFIG_REFUSED: ConverseError = {
  status: 400,
  errorType: 'ValidationException',
  message: 'The model returned the following errors: output_config.format: Extra inputs are not permitted',
};

/** `responder`, except that a request with structured output is refused as above. */
export function refusingStructuredOutput(responder: Responder = offlineResponder): Responder {
  return (request) => (request.outputConfig ? OUTPUT_CONFIG_REFUSED : responder(request));
}
