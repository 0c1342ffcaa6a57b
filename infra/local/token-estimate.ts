/**
 * The local Converse stand-in's token counts: a calibrated estimate of what Bedrock would
 * bill for a request, since no Claude tokenizer can run here (Bedrock's own CountTokens API,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html, is the
 * exact count in an account). Counted as Anthropic describes a tool-use request's input:
 * - the text of the system blocks and the messages, and the tool definitions (name,
 *   description and JSON schema: "The `tools` parameter in API requests (tool names,
 *   descriptions, and schemas)" is billed as input), at about 3.5 characters per token
 *   ("For Claude, a token approximately represents 3.5 English characters",
 *   https://platform.claude.com/docs/en/about-claude/glossary);
 * - plus the hidden tool-use system prompt when tools are present: 588 tokens for Claude
 *   Haiku/Sonnet/Opus 4.5 with `tool_choice` any or tool (the forced tool our reflector uses),
 *   per https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview (an older
 *   version of that table, still on the Bedrock parameters page, gives 313; the higher
 *   figure is taken so the bill is not flattered).
 * - with structured output instead (`outputConfig.textFormat`, no tools): no tool-use prompt, but
 *   "Claude automatically receives an additional system prompt explaining the expected output
 *   format … The injected prompt costs you tokens like any other system prompt"
 *   (https://platform.claude.com/docs/en/build-with-claude/structured-outputs). Its size is not
 *   published: the schema's text, its name and description are counted as input at the same
 *   rate, plus STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS (100) for the explanation, an allowance.
 * The output counts the answer's text, or the tool input as JSON, at the same rate.
 * An estimate: real tokenizers count JSON punctuation and rare words denser than prose.
 */
import {
  CLAUDE_CHARS_PER_TOKEN,
  STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS,
  TOOL_USE_SYSTEM_PROMPT_TOKENS,
} from '../../lib/model/bedrock-models.js';
import type { ConverseRequest } from './converse-protocol.js';

export { STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS, TOOL_USE_SYSTEM_PROMPT_TOKENS };
export const CHARS_PER_TOKEN = CLAUDE_CHARS_PER_TOKEN;

const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** Input tokens of a Converse request as Bedrock would count them (the estimate above). */
export function estimateInputTokens(request: ConverseRequest): number {
  const system = (request.system ?? []).map((s) => s.text ?? '').join('\n');
  const messages = (request.messages ?? []).flatMap((m) => m.content.map((c) => c.text ?? '')).join('\n');
  const tools = request.toolConfig?.tools ?? [];
  const toolText = tools.length > 0 ? JSON.stringify(tools) : '';
  const format = request.outputConfig?.textFormat?.structure?.jsonSchema;
  const formatText = format ? [format.name, format.description, format.schema].filter(Boolean).join('\n') : '';
  const hidden =
    (tools.length > 0 ? TOOL_USE_SYSTEM_PROMPT_TOKENS : 0) + (format ? STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS : 0);
  return tokensOf(system.length + messages.length + toolText.length + formatText.length) + hidden;
}

/** Output tokens of an answer: its text, or a tool call's input as JSON. */
export function estimateOutputTokens(output: unknown): number {
  return tokensOf((typeof output === 'string' ? output : JSON.stringify(output)).length);
}
