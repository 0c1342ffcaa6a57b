/**
 * The Converse protocol as the local stand-in speaks it: the request it reads, the replies
 * it sends (a response body, or an error as Bedrock sends it: HTTP status, the
 * `x-amzn-errortype` header, a `message` body), and Bedrock's other answers as scripted
 * replies for tests.
 *
 * Bedrock's answers (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html;
 * error statuses as in the service model the SDK is generated from, @aws-sdk/client-bedrock-runtime):
 * - `stopReason` is one of end_turn, tool_use, max_tokens, stop_sequence, guardrail_intervened,
 *   content_filtered, malformed_model_output, malformed_tool_use, model_context_window_exceeded
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_MessageStopEvent.html);
 * - ModelErrorException, HTTP 424: "The request failed due to an error while processing the model.";
 * - AccessDeniedException, HTTP 403, when the account has no access to the model: "You don't
 *   have access to the model with the specified model ID."
 *   (https://repost.aws/knowledge-center/bedrock-invokemodel-api-error).
 */

import { promptedAnswerNameOf } from '../../lib/model/prompted-answer.js';

export interface ConverseRequest {
  modelId: string;
  system?: Array<{ text?: string }>;
  messages?: Array<{ role: string; content: Array<{ text?: string }> }>;
  inferenceConfig?: { temperature?: number; topP?: number; maxTokens?: number };
  toolConfig?: {
    tools?: Array<{ toolSpec?: { name?: string; description?: string; inputSchema?: unknown } }>;
    toolChoice?: { tool?: { name?: string }; auto?: object; any?: object };
  };
  /** Structured output (lib/model/structured-output.ts): the answer follows this JSON schema, sent as a string. */
  outputConfig?: {
    textFormat?: {
      type?: string;
      structure?: { jsonSchema?: { schema?: string; name?: string; description?: string } };
    };
  };
}

/**
 * The name of the structured answer a request asks for: its forced tool's, its structured
 * output schema's, or the one its last system block's answer type names (an answer asked for
 * in the prompt, lib/model/prompted-answer.ts); undefined for a request answered in free text
 * (a summary).
 */
export const answerNameOf = (request: ConverseRequest): string | undefined =>
  request.toolConfig?.toolChoice?.tool?.name ??
  request.toolConfig?.tools?.[0]?.toolSpec?.name ??
  request.outputConfig?.textFormat?.structure?.jsonSchema?.name ??
  promptedAnswerNameOf(request.system?.at(-1)?.text ?? '');

/** An error as Bedrock sends it. */
export interface ConverseError {
  status: number;
  errorType: string;
  message: string;
}

/** A scripted reply: a Converse response body, an error as Bedrock sends it, or no answer at all. */
export type ConverseReply = { body: Record<string, unknown> } | ConverseError | { hang: true };

export type Responder = (request: ConverseRequest) => ConverseReply | Promise<ConverseReply>;

export const MODEL_ERROR: ConverseError = {
  status: 424,
  errorType: 'ModelErrorException',
  message: 'The request failed due to an error while processing the model.',
};
export const ACCESS_DENIED: ConverseError = {
  status: 403,
  errorType: 'AccessDeniedException',
  message: "You don't have access to the model with the specified model ID.",
};

/**
 * What a model cut at `maxTokens` sends: `stopReason: "max_tokens"` and the first part of the
 * answer `full` would have given — as text, a tool call's input being JSON the model did not
 * finish. Its output tokens are the whole budget.
 */
export function cutReply(request: ConverseRequest, full: ConverseReply): ConverseReply {
  if (!('body' in full)) return full;
  const message = (
    full.body.output as { message?: { content?: Array<{ text?: string; toolUse?: { input?: unknown } }> } } | undefined
  )?.message;
  const whole = (message?.content ?? [])
    .map((c) => c.text ?? (c.toolUse ? JSON.stringify(c.toolUse.input) : ''))
    .join('');
  const maxTokens = request.inferenceConfig?.maxTokens ?? 1;
  const text = whole.slice(0, Math.max(1, Math.min(Math.floor(whole.length / 2), maxTokens * 4)));
  const usage = full.body.usage as { inputTokens?: number } | undefined;
  const inputTokens = usage?.inputTokens ?? 0;
  return {
    body: {
      ...full.body,
      output: { message: { role: 'assistant', content: [{ text }] } },
      stopReason: 'max_tokens',
      usage: { inputTokens, outputTokens: maxTokens, totalTokens: inputTokens + maxTokens },
    },
  };
}

/** What a model that produced an invalid tool call sends: `stopReason: "malformed_tool_use"`. */
export function malformedToolUseReply(request: ConverseRequest): ConverseReply {
  return {
    body: {
      output: {
        message: {
          role: 'assistant',
          content: [
            {
              toolUse: {
                toolUseId: 'malformed-1',
                name: answerNameOf(request) ?? 'tool',
                input: '{"new_facts": [{"title": ',
              },
            },
          ],
        },
      },
      stopReason: 'malformed_tool_use',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      metrics: { latencyMs: 1 },
    },
  };
}
