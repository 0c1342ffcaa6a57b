/** A scripted language model for tests: answers each request as the test says, and keeps the requests. */
import type { ModelRequest, ModelResponse, LanguageModel, SummaryRequest } from './language-model.port.js';

/** A scripted answer with the stopReason Converse would send with it (max_tokens, malformed_tool_use…). */
export class Stopped {
  constructor(
    readonly stopReason: string,
    readonly answer: unknown,
  ) {}
}

export const stopped = (stopReason: string, answer: unknown) => new Stopped(stopReason, answer);

export class ScriptedModel implements LanguageModel {
  readonly requests: ModelRequest[] = [];
  readonly summaries: SummaryRequest[] = [];
  /** The model's output limit, as the catalogue gives it to the Bedrock adapter. */
  maxOutputTokens: number | undefined = undefined;
  constructor(
    private readonly reply: (req: ModelRequest) => unknown,
    private readonly summary: (req: SummaryRequest) => string | Stopped = () => 'A summary.',
  ) {}
  async summarize(req: SummaryRequest) {
    this.summaries.push(req);
    const answer = this.summary(req);
    const [text, stopReason] =
      answer instanceof Stopped ? [String(answer.answer), answer.stopReason] : [answer, 'end_turn'];
    return { text, usage: { modelId: 'scripted', inputTokens: 10, outputTokens: 5, latencyMs: 1, stopReason } };
  }
  async reflect(req: ModelRequest): Promise<ModelResponse> {
    this.requests.push(req);
    const answer = this.reply(req);
    const [output, stopReason] = answer instanceof Stopped ? [answer.answer, answer.stopReason] : [answer, 'tool_use'];
    return { output, usage: { modelId: 'scripted', inputTokens: 10, outputTokens: 5, latencyMs: 1, stopReason } };
  }
}
