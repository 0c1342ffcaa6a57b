/** The language model (Bedrock Converse) and the embedding model, as the use cases call them, and their errors. */
import type { ModelUsage } from '../batches/batch-log.js';

export interface ModelRequest {
  system: string;
  prompt: string;
  toolName: string;
  toolDescription: string;
  toolInputSchema: Record<string, unknown>;
  temperature: number;
  maxTokens: number;
  /** Abandons the call when it aborts (the invocation's time is running out): ModelUnavailableError. */
  signal?: AbortSignal;
}

export interface ModelResponse {
  /** The forced tool's input when the model used it, else the text it wrote. */
  output: unknown;
  usage: Omit<ModelUsage, 'reused'>;
}

export interface SummaryRequest {
  /** The current context: what the summary is about. */
  system: string;
  /** The instruction, req R-SUM-2's "Write a concise summary of the current context." */
  prompt: string;
  temperature: number;
  maxTokens: number;
  /** As ModelRequest.signal. */
  signal?: AbortSignal;
}

export interface SummaryResponse {
  text: string;
  /** With the call's `stopReason`. */
  usage: Omit<ModelUsage, 'reused'>;
}

export interface LanguageModel {
  /**
   * The most output tokens a call may ask for (the model's limit, lib/model/bedrock-models.ts):
   * a larger budget is refused. Undefined for a model the catalogue does not know.
   */
  readonly maxOutputTokens?: number | undefined;
  /**
   * One Converse call with forced tool output; `usage.stopReason` says why the model stopped.
   * Throws ModelUnavailableError for throttling, timeouts, 5xx and model errors (retryable),
   * ModelAccessDeniedError when the model may not be invoked (access not granted, IAM).
   * A call abandoned because its request's `signal` aborted throws ModelUnavailableError too.
   */
  reflect(request: ModelRequest): Promise<ModelResponse>;
  /** One Converse call answered in text. Same errors. */
  summarize(request: SummaryRequest): Promise<SummaryResponse>;
}

/**
 * The model answered, but not in the shape asked for, and the job will be delivered
 * again: retry rather than record the garbage (on the last delivery the use cases abort
 * and log it, as req R-ERR says).
 */
export class UnusableModelOutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnusableModelOutputError';
  }
}

/** Throttling, timeouts, 5xx: worth retrying later (the job goes back to its queue). */
export class ModelUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ModelUnavailableError';
  }
}

/**
 * The model may not be invoked: Bedrock answered AccessDeniedException (model access not
 * granted in the Region, or the role's InvokeModel grant does not cover it). Not transient,
 * but not the job's fault either: the job fails, SQS delivers it again and parks it in the
 * DLQ, and the failure log names the cause so the job can be redriven once access is granted.
 */
export class ModelAccessDeniedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ModelAccessDeniedError';
  }
}

/**
 * Text → embedding vector, for hybrid retrieval (lib/model/titan-embeddings.adapter.ts:
 * Amazon Titan Text Embeddings V2 through Bedrock InvokeModel). Failures are the model's:
 * ModelUnavailableError (throttling, timeouts, 5xx: worth asking again later) and
 * ModelAccessDeniedError.
 */
export interface EmbeddingModel {
  readonly modelId: string;
  readonly dimensions: number;
  /**
   * One unit-length vector per text, in order; null for a text with nothing to embed (blank).
   * `signal`: the invocation's deadline (lib/kernel/deadline.ts); when it aborts, the calls
   * are abandoned with a ModelUnavailableError.
   */
  embed(texts: readonly string[], options?: { signal?: AbortSignal | undefined }): Promise<Array<Float32Array | null>>;
}
