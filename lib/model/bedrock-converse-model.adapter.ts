import {
  type BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { type AnswerShape, maxOutputTokensOf, supportsStructuredOutput } from './bedrock-models.js';
import { extractJsonObject, promptedAnswerInstruction } from './prompted-answer.js';
import { toStructuredOutputSchema } from './structured-output.js';
import type { Log } from '../kernel/runtime.port.js';
import type {
  ModelRequest,
  ModelResponse,
  LanguageModel,
  SummaryRequest,
  SummaryResponse,
} from './language-model.port.js';
import { ModelAccessDeniedError, ModelUnavailableError } from './language-model.port.js';
import { isTransientBedrockError } from './bedrock-errors.js';

/**
 * The answer as a JSON schema the model must follow (Converse `outputConfig.textFormat`, for
 * models that serve it: lib/model/structured-output.ts). Not a forced tool: that adds Claude's
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
  // and billed with the schema on every call while the system prompt already says what the answer is for.
  return {
    outputConfig: {
      textFormat: { type: 'json_schema' as const, structure: { jsonSchema: { schema, name: request.toolName } } },
    },
  };
}

/**
 * Models whose structured output Bedrock refused in this container: module-level, so a warm
 * Lambda container asks each such model with a forced tool from then on, and says so once.
 */
const structuredOutputRefused = new Set<string>();

/**
 * Bedrock refusing the `outputConfig` field itself, not the request's schema: a
 * ValidationException saying the field is not permitted. Since August 2026 Bedrock answers
 * it for some Claude models that list structured output ("The model returned the following errors:
 * output_config.format: Extra inputs are not permitted", vectorize-io/hindsight#3300,
 * presenton/presenton#939; "Malformed input request: #: extraneous key [outputConfig] is not
 * permitted", MattJColes/lgtmaybe#536). A schema the model refuses ("output_config.format.schema:
 * For 'integer' type, …") is not this: the request is wrong, not the field.
 */
export function isStructuredOutputRefusal(error: unknown): boolean {
  const message = (error as Error).message ?? '';
  return (
    (error as Error).name === 'ValidationException' &&
    /output_config(\.format)?: Extra inputs are not permitted|extraneous key \[outputConfig\]/i.test(message)
  );
}

/** The answer as the input of a tool the model must call (`toolChoice: { tool }`): for models without structured output. */
function forcedTool(request: ModelRequest) {
  return {
    toolConfig: {
      // The SDK types the schema as a DocumentType (any JSON value).
      tools: [
        {
          toolSpec: {
            name: request.toolName,
            description: request.toolDescription,
            inputSchema: { json: request.toolInputSchema as Record<string, never> },
          },
        },
      ],
      toolChoice: { tool: { name: request.toolName } },
    },
  };
}

/** The text blocks of an answer, joined. */
const textOf = (res: ConverseCommandOutput): string =>
  (res.output?.message?.content ?? []).map((c) => c.text ?? '').join('');

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
 * system block (lib/model/prompted-answer.ts, from the same schema) with no tool and no
 * output schema, the answer's text read as JSON. A model whose structured output Bedrock
 * refuses (isStructuredOutputRefusal) is asked with the forced tool from then on in this
 * container. Every answer carries Converse's `stopReason`
 * in its usage, for the use cases to act on.
 */
export class BedrockConverseModel implements LanguageModel {
  readonly maxOutputTokens: number | undefined;
  private readonly answerShape: AnswerShape;
  private readonly log: Pick<Log, 'warn'> | undefined;

  constructor(
    private readonly client: BedrockRuntimeClient,
    private readonly modelId: string,
    options: { answerShape?: AnswerShape; log?: Pick<Log, 'warn'> } = {},
  ) {
    this.maxOutputTokens = maxOutputTokensOf(modelId);
    this.answerShape = options.answerShape ?? 'schema';
    this.log = options.log;
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
    if (supportsStructuredOutput(this.modelId) && !structuredOutputRefused.has(this.modelId)) {
      const res = await this.structuredOrRefused(request);
      if (res) return { output: parseJsonText(textOf(res), false), usage: this.usage(res, started) };
    }
    const res = await this.converse(
      new ConverseCommand({ ...this.baseInput(request), ...forcedTool(request) }),
      request.signal,
    );
    const toolUse = (res.output?.message?.content ?? []).find((c) => c.toolUse?.name === request.toolName)?.toolUse;
    return { output: toolUse?.input ?? textOf(res), usage: this.usage(res, started) };
  }

  /**
   * The call with structured output; null when Bedrock refuses the output config for this
   * model (isStructuredOutputRefusal): the model is then asked with a forced tool, this call
   * and every later one in this container, and one WARN line says so.
   */
  private async structuredOrRefused(request: ModelRequest): Promise<ConverseCommandOutput | null> {
    try {
      return await this.converse(
        new ConverseCommand({ ...this.baseInput(request), ...structuredOutput(request) }),
        request.signal,
      );
    } catch (error) {
      if (!isStructuredOutputRefusal(error)) throw error;
      if (!structuredOutputRefused.has(this.modelId)) {
        structuredOutputRefused.add(this.modelId);
        this.log?.warn(
          'Bedrock refused structured output for this model: asking with a forced tool from now on in this container',
          {
            modelId: this.modelId,
            error: (error as Error).message,
          },
        );
      }
      return null;
    }
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
      if (name === 'AbortError')
        throw new ModelUnavailableError(`model ${this.modelId} call abandoned: the invocation's time was running out`, {
          cause: error,
        });
      if (isTransientBedrockError(error))
        throw new ModelUnavailableError(`model ${this.modelId} unavailable: ${name}`, { cause: error });
      if (name === 'AccessDeniedException') throw await this.accessDenied(error as Error);
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      // A 2xx whose body the SDK could not read (e.g. a tool input nested thousands of levels
      // deep overflows its deserializer with a RangeError): like an outage, retried once and
      // then recorded as the job's failure, rather than failing every delivery unexplained.
      if (status >= 200 && status < 300) {
        throw new ModelUnavailableError(`model ${this.modelId} answered, but the answer could not be read: ${name}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  /**
   * Bedrock answers AccessDeniedException when the account has no access to the model in the
   * Region ("You don't have access to the model with the specified model ID.",
   * https://repost.aws/knowledge-center/bedrock-invokemodel-api-error), when the first call could
   * not subscribe to it in AWS Marketplace ("Model access is denied due to IAM user or service
   * role is not authorized to perform the required AWS Marketplace actions …"), and when the
   * caller's IAM policy does not allow InvokeModel ("User: … is not authorized to perform:
   * bedrock:InvokeModel on resource: …"). The console's "Model access" page is retired: access
   * is enabled by default with the right Marketplace permissions, the first call to a
   * third-party model subscribes the account with the caller's aws-marketplace:Subscribe,
   * Unsubscribe and ViewSubscriptions, and Anthropic models need a one-time use-case form
   * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html); a Legacy model is
   * closed to new customers (https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html).
   * The message says which, and what to do (`npm run smoke` checks it before publishing).
   */
  private async accessDenied(error: Error): Promise<ModelAccessDeniedError> {
    const region = await this.client.config.region().catch(() => 'its Region');
    const access = `no access to ${this.modelId} in ${region}`;
    const subscribe = `call the model once as a principal allowed aws-marketplace:Subscribe, aws-marketplace:Unsubscribe and aws-marketplace:ViewSubscriptions (npm run smoke's pre-flight does), or open it from the Model catalog of the Bedrock console in ${region}`;
    const form = /anthropic\./.test(this.modelId)
      ? '; for Anthropic, submit the use-case form once from the Model catalog'
      : '';
    const cause = /not authorized to perform: bedrock:/i.test(error.message)
      ? `the function's role may not invoke ${this.modelId} in ${region}: check its bedrock:InvokeModel grant (infra/stacks/reflector-model.ts)`
      : /AWS Marketplace/i.test(error.message)
        ? `${access}: the role's first call could not subscribe the account to it in AWS Marketplace: ${subscribe}`
        : `${access}: ${subscribe}${form}; a Legacy model is closed to new customers: pick an Active one from the model cards`;
    return new ModelAccessDeniedError(`${cause} (Bedrock: ${error.message})`, { cause: error });
  }
}
