import { type BedrockRuntimeClient, ConverseCommand, type ConverseCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { type AnswerShape, maxOutputTokensOf, supportsStructuredOutput } from '../domain/bedrock-models.js';
import { extractJsonObject, promptedAnswerInstruction } from '../domain/prompted-answer.js';
import { toStructuredOutputSchema } from '../domain/structured-output.js';
import type { ModelRequest, ModelResponse, LanguageModel, SummaryRequest, SummaryResponse } from '../ports.js';
import { ModelAccessDeniedError, ModelUnavailableError } from '../ports.js';

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
  const network = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '');
  return RETRYABLE_BEDROCK_ERRORS.has((error as Error).name) || status >= 500 || status === 429 || network;
}

/**
 * The answer as a JSON schema the model must follow (Converse `outputConfig.textFormat`, for
 * models that serve it: lib/domain/structured-output.ts). Not a forced tool: that adds Claude's
 * hidden tool-use system prompt (588 tokens for a 4.5 model with `tool_choice` tool,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview) to every call,
 * while structured output adds a prompt "explaining the expected output format"
 * (https://platform.claude.com/docs/en/build-with-claude/structured-outputs). The answer comes
 * back as text holding JSON; the use cases' zod parse still enforces every limit the schema
 * cannot carry.
 */
function structuredOutput(request: ModelRequest) {
  const schema = JSON.stringify(toStructuredOutputSchema(request.toolInputSchema));
  // No `description`: optional (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_JsonSchemaDefinition.html),
  // and billed with the schema on every call while the system prompt already says what the answer is for (issue 19).
  return { outputConfig: { textFormat: { type: 'json_schema' as const, structure: { jsonSchema: { schema, name: request.toolName } } } } };
}

/** The answer as the input of a tool the model must call (`toolChoice: { tool }`): for models without structured output. */
function forcedTool(request: ModelRequest) {
  return {
    toolConfig: {
      // The SDK types the schema as a DocumentType (any JSON value).
      tools: [{ toolSpec: { name: request.toolName, description: request.toolDescription, inputSchema: { json: request.toolInputSchema as Record<string, never> } } }],
      toolChoice: { tool: { name: request.toolName } },
    },
  };
}

/** The text blocks of an answer, joined. */
const textOf = (res: ConverseCommandOutput): string => (res.output?.message?.content ?? []).map((c) => c.text ?? '').join('');

/**
 * A structured answer's text as the JSON it holds: the whole text (structured output), or the
 * first object in it (an answer asked for in the prompt may come in prose or a code fence); the
 * text itself when it holds none (the use cases then find it unusable and keep it).
 */
function parseJsonText(text: string, prompted: boolean): unknown {
  const json = prompted ? extractJsonObject(text) : text;
  if (json === null) return text;
  try {
    return JSON.parse(json);
  } catch {
    return text;
  }
}

/**
 * Bedrock Runtime Converse with the answer's structure given, per `answerShape`: 'schema', as
 * structured output where the model serves it, else as a forced tool (`toolChoice: { tool }`),
 * either schema from the zod output schema; 'prompt', as a TypeScript-like type in a last
 * system block (lib/domain/prompted-answer.ts, from the same schema) with no tool and no
 * output schema, the answer's text read as JSON. Every answer carries Converse's `stopReason`
 * in its usage, for the use cases to act on.
 */
export class BedrockConverseModel implements LanguageModel {
  readonly maxOutputTokens: number | undefined;
  private readonly answerShape: AnswerShape;

  constructor(
    private readonly client: BedrockRuntimeClient,
    private readonly modelId: string,
    options: { answerShape?: AnswerShape } = {},
  ) {
    this.maxOutputTokens = maxOutputTokensOf(modelId);
    this.answerShape = options.answerShape ?? 'schema';
  }

  async summarize(request: SummaryRequest): Promise<SummaryResponse> {
    const started = Date.now();
    const res = await this.converse(new ConverseCommand(this.baseInput(request)), request.signal);
    return { text: textOf(res).trim(), usage: this.usage(res, started) };
  }

  async reflect(request: ModelRequest): Promise<ModelResponse> {
    const started = Date.now();
    if (this.answerShape === 'prompt') {
      const input = this.baseInput(request);
      const system = [...input.system, { text: promptedAnswerInstruction(request.toolName, request.toolInputSchema) }];
      const res = await this.converse(new ConverseCommand({ ...input, system }), request.signal);
      return { output: parseJsonText(textOf(res), true), usage: this.usage(res, started) };
    }
    const structured = supportsStructuredOutput(this.modelId);
    const res = await this.converse(new ConverseCommand({ ...this.baseInput(request), ...(structured ? structuredOutput(request) : forcedTool(request)) }), request.signal);
    if (structured) return { output: parseJsonText(textOf(res), false), usage: this.usage(res, started) };
    const toolUse = (res.output?.message?.content ?? []).find((c) => c.toolUse?.name === request.toolName)?.toolUse;
    return { output: toolUse?.input ?? textOf(res), usage: this.usage(res, started) };
  }

  /** One user message with a system prompt: what both calls send. */
  private baseInput(request: SummaryRequest | ModelRequest) {
    return {
      modelId: this.modelId,
      system: [{ text: request.system }],
      messages: [{ role: 'user' as const, content: [{ text: request.prompt }] }],
      inferenceConfig: { temperature: request.temperature, maxTokens: request.maxTokens },
    };
  }

  private usage(res: ConverseCommandOutput, started: number): ModelResponse['usage'] {
    return {
      modelId: this.modelId,
      inputTokens: res.usage?.inputTokens ?? 0,
      outputTokens: res.usage?.outputTokens ?? 0,
      latencyMs: res.metrics?.latencyMs ?? Date.now() - started,
      ...(res.stopReason ? { stopReason: res.stopReason } : {}),
    };
  }

  /**
   * One call; throttling, timeouts, 5xx, model errors and network errors become
   * ModelUnavailableError, an access denial ModelAccessDeniedError naming the model and Region.
   * `signal` goes to the SDK as the call's `abortSignal` (https://aws.amazon.com/blogs/developer/abortcontroller-in-modular-aws-sdk-for-javascript/):
   * when it aborts, the request and any retry backoff end with an AbortError, which the SDK
   * does not retry; the call is then abandoned as unavailable (retried by the job's next delivery).
   */
  private async converse(command: ConverseCommand, signal?: AbortSignal): Promise<ConverseCommandOutput> {
    try {
      return await this.client.send(command, signal ? { abortSignal: signal } : {});
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'AbortError') throw new ModelUnavailableError(`model ${this.modelId} call abandoned: the invocation's time was running out`, { cause: error });
      if (isTransientBedrockError(error)) throw new ModelUnavailableError(`model ${this.modelId} unavailable: ${name}`, { cause: error });
      if (name === 'AccessDeniedException') throw await this.accessDenied(error as Error);
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      // A 2xx whose body the SDK could not read (e.g. a tool input nested thousands of levels
      // deep overflows its deserializer with a RangeError): like an outage, retried once and
      // then recorded as the job's failure, rather than failing every delivery unexplained.
      if (status >= 200 && status < 300) {
        throw new ModelUnavailableError(`model ${this.modelId} answered, but the answer could not be read: ${name}`, { cause: error });
      }
      throw error;
    }
  }

  /**
   * Bedrock answers AccessDeniedException when the account has no access to the model in the
   * Region ("You don't have access to the model with the specified model ID.",
   * https://repost.aws/knowledge-center/bedrock-invokemodel-api-error), when the first call could
   * not subscribe to it in AWS Marketplace ("Model access is denied due to IAM user or service
   * role is not authorized to perform the required AWS Marketplace actions …",
   * https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html), and when the caller's
   * IAM policy does not allow InvokeModel ("User: … is not authorized to perform:
   * bedrock:InvokeModel on resource: …"). The message says which, and what to do.
   */
  private async accessDenied(error: Error): Promise<ModelAccessDeniedError> {
    const region = await this.client.config.region().catch(() => 'its Region');
    const access = `model access not granted for ${this.modelId} in ${region}`;
    const cause = /not authorized to perform: bedrock:/i.test(error.message)
      ? `the function's role may not invoke ${this.modelId} in ${region}: check its bedrock:InvokeModel grant (infra/stacks/reflector-model.ts)`
      : /AWS Marketplace/i.test(error.message)
        ? `${access}: enable the model in the Bedrock console (Model access) of that Region; the role's first call could not subscribe to it in AWS Marketplace`
        : `${access}: request access to the model in the Bedrock console (Model access) of that Region`;
    return new ModelAccessDeniedError(`${cause} (Bedrock: ${error.message})`, { cause: error });
  }
}
