import { type BedrockRuntimeClient, ConverseCommand, type ConverseCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import type { ModelRequest, ModelResponse, ReflectionModel, SummaryRequest } from '../ports.js';
import { ModelUnavailableError } from '../ports.js';

const RETRYABLE = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'ModelTimeoutException',
  'InternalServerException',
  'ModelNotReadyException',
  'TimeoutError',
  'RequestTimeout',
]);

/**
 * Bedrock Runtime Converse with structured output forced through a tool
 * (`toolChoice: { tool }`), whose input schema comes from the zod output schema.
 */
export class BedrockConverseModel implements ReflectionModel {
  constructor(
    private readonly client: BedrockRuntimeClient,
    private readonly modelId: string,
  ) {}

  async summarize(request: SummaryRequest): Promise<{ text: string; usage: ModelResponse['usage'] }> {
    const started = Date.now();
    const res = await this.converse(new ConverseCommand(this.baseInput(request)));
    return { text: (res.output?.message?.content ?? []).map((c) => c.text ?? '').join('').trim(), usage: this.usage(res, started) };
  }

  async reflect(request: ModelRequest): Promise<ModelResponse> {
    const started = Date.now();
    const res = await this.converse(
        new ConverseCommand({
          ...this.baseInput(request),
          toolConfig: {
            tools: [
              {
                toolSpec: {
                  name: request.toolName,
                  description: request.toolDescription,
                  // The SDK types this as a DocumentType (any JSON value).
                  inputSchema: { json: request.toolInputSchema as Record<string, never> },
                },
              },
            ],
            toolChoice: { tool: { name: request.toolName } },
          },
        }),
    );
    const content = res.output?.message?.content ?? [];
    const toolUse = content.find((c) => c.toolUse?.name === request.toolName)?.toolUse;
    const text = content.map((c) => c.text ?? '').join('');
    return { output: toolUse?.input ?? text, usage: this.usage(res, started) };
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
    };
  }

  /** One call; throttling, timeouts, 5xx and network errors become ModelUnavailableError. */
  private async converse(command: ConverseCommand): Promise<ConverseCommandOutput> {
    try {
      return await this.client.send(command);
    } catch (error) {
      const name = (error as Error).name;
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      const network = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '');
      if (RETRYABLE.has(name) || status >= 500 || status === 429 || network) {
        throw new ModelUnavailableError(`model ${this.modelId} unavailable: ${name}`, { cause: error });
      }
      // A 2xx whose body the SDK could not read (e.g. a tool input nested thousands of levels
      // deep overflows its deserializer with a RangeError): like an outage, retried once and
      // then recorded as the job's failure, rather than failing every delivery unexplained.
      if (status >= 200 && status < 300) {
        throw new ModelUnavailableError(`model ${this.modelId} answered, but the answer could not be read: ${name}`, { cause: error });
      }
      throw error;
    }
  }
}
