/**
 * A job's deadline for its model calls. The reflector's handler makes an AbortSignal that
 * aborts while the invocation still has the time its failure path needs
 * (functions/reflector/job-record-handler.ts); the use cases see only a LanguageModel whose calls
 * carry it. A model that does not answer in time then ends in the job's retry path (a
 * ModelUnavailableError) rather than in a Lambda timeout. The same signal bounds the embedding
 * calls of the search index compaction the handler runs after the job (EmbeddingModel.embed's
 * `signal`, through LiveSearchIndex.compact): an embedding model that does not answer in time
 * leaves the change marks for the next compaction.
 */
import type { LanguageModel } from '../model/language-model.port.js';

/** `model` with every call bound to `signal` (no signal: `model` itself). */
export function modelWithDeadline(model: LanguageModel, signal: AbortSignal | undefined): LanguageModel {
  if (!signal) return model;
  return {
    maxOutputTokens: model.maxOutputTokens,
    reflect: (request) => model.reflect({ ...request, signal }),
    summarize: (request) => model.summarize({ ...request, signal }),
  };
}
