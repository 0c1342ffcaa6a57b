/**
 * The embedding port over Amazon Titan Text Embeddings V2 (`amazon.titan-embed-text-v2:0`),
 * one Bedrock Runtime InvokeModel call per text.
 *
 * The request body is Titan V2's: `inputText` (required), `dimensions` (1024 by default, or 512
 * or 256), `normalize` (default true); the answer carries `embedding` (floats) and
 * `inputTextTokenCount` (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html).
 * The model takes a non-empty string of up to 8,192 tokens or 50,000 characters
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/titan-embedding-models.html); a text
 * is cut at MAX_INPUT_CHARS, so that no text reaches the token limit whatever its language
 * (the same page gives about 4.7 characters per token for English), and a blank one is not sent.
 * The caller's role needs bedrock:InvokeModel on the foundation model's ARN,
 * `arn:aws:bedrock:{region}::foundation-model/amazon.titan-embed-text-v2:0`
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html;
 * infra/constructs/function-grants.ts grants it when the stage embeds).
 * Embedding models are throttled by requests per minute (the same page): at most CONCURRENCY
 * calls at a time, each retried by the client's standard retry mode (aws-clients.ts).
 */
import { type BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { type EmbeddingModel, ModelAccessDeniedError, ModelUnavailableError } from './language-model.port.js';
import { isTransientBedrockError } from './bedrock-errors.js';

export const TITAN_EMBED_TEXT_V2 = 'amazon.titan-embed-text-v2:0';
/** The output sizes Titan Text Embeddings V2 accepts. */
export const TITAN_DIMENSIONS = [256, 512, 1024] as const;
/** Characters sent per text: under 8,192 tokens at one token per character or more. */
export const MAX_INPUT_CHARS = 8_000;
const CONCURRENCY = 4;

export class BedrockTitanEmbeddings implements EmbeddingModel {
  constructor(
    private readonly client: BedrockRuntimeClient,
    readonly modelId: string,
    readonly dimensions: number,
  ) {
    if (!(TITAN_DIMENSIONS as readonly number[]).includes(dimensions))
      throw new Error(
        `Titan Text Embeddings V2 makes vectors of ${TITAN_DIMENSIONS.join(', ')} dimensions, not ${dimensions}`,
      );
  }

  async embed(
    texts: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<Array<Float32Array | null>> {
    const out: Array<Float32Array | null> = new Array(texts.length).fill(null);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < texts.length; i = next++) out[i] = await this.embedOne(texts[i] ?? '', options.signal);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, texts.length) }, worker));
    return out;
  }

  /**
   * `signal` goes to the SDK as the call's `abortSignal`, as the Converse adapter's does
   * (bedrock-converse-model.ts): when it aborts, the request and any retry backoff end with an
   * AbortError, and the call is abandoned as unavailable.
   */
  private async embedOne(text: string, signal: AbortSignal | undefined): Promise<Float32Array | null> {
    const inputText = text.trim().slice(0, MAX_INPUT_CHARS);
    if (inputText === '') return null;
    const body = JSON.stringify({ inputText, dimensions: this.dimensions, normalize: true });
    let res: { body?: Uint8Array };
    try {
      res = await this.client.send(
        new InvokeModelCommand({
          modelId: this.modelId,
          contentType: 'application/json',
          accept: 'application/json',
          body,
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw this.failure(error as Error);
    }
    const answer = JSON.parse(new TextDecoder().decode(res.body)) as { embedding?: unknown };
    const e = answer.embedding;
    if (!Array.isArray(e) || e.length !== this.dimensions || !e.every((x) => typeof x === 'number')) {
      throw new ModelUnavailableError(`${this.modelId} answered without an embedding of ${this.dimensions} numbers`);
    }
    return Float32Array.from(e as number[]);
  }

  /** As the Converse adapter classifies Bedrock's errors (isTransientBedrockError): throttling, timeouts, 5xx and network errors are worth asking again. */
  private failure(error: Error): Error {
    // An AbortError: the invocation's deadline came (embedOne); the call is abandoned, worth asking again later.
    if (error.name === 'AbortError' || isTransientBedrockError(error)) {
      return new ModelUnavailableError(`embedding model ${this.modelId} unavailable: ${error.name}`, { cause: error });
    }
    if (error.name === 'AccessDeniedException') {
      return new ModelAccessDeniedError(
        `the function may not invoke ${this.modelId}: check the stage's embedding grant and model access in the Bedrock console (Bedrock: ${error.message})`,
        {
          cause: error,
        },
      );
    }
    return error;
  }
}

/** The stage's embedding model from a function's environment (EMBEDDING_MODEL_ID, EMBEDDING_DIMENSIONS), or undefined when it does not embed. */
export function embeddingModelOf(
  client: BedrockRuntimeClient,
  env: { EMBEDDING_MODEL_ID?: string | undefined; EMBEDDING_DIMENSIONS?: number | undefined },
): BedrockTitanEmbeddings | undefined {
  if (env.EMBEDDING_MODEL_ID === undefined) return undefined;
  return new BedrockTitanEmbeddings(client, env.EMBEDDING_MODEL_ID, env.EMBEDDING_DIMENSIONS ?? 1024);
}
