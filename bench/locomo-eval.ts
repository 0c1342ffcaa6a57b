/**
 * Answer-level evaluation on LoCoMo, for a team to run on its own AWS account:
 * each dev conversation is replayed through the local harness (reflection by the offline
 * model, as in the locomo bench), then every question of categories 1–4 is answered by
 * `--model` from the top `--k` results of `memory.search`, and judged by the same model
 * against LoCoMo's gold answer — the usual LLM-as-judge "J" score of published memory
 * systems — besides LoCoMo's own token F1 of answer and gold answer, computed here.
 *
 *   npm run eval -- --model us.anthropic.claude-haiku-4-5-20251001-v1:0 [--region us-east-1]
 *                   [--quick] [--questions N] [--k 10] [--dir DIR]
 *
 * With `--model` the answer and judge calls go to Amazon Bedrock's Converse in `--region`
 * with the caller's credentials (bedrock:InvokeModel on that model or profile). Without it,
 * they go to the local stand-in's offline model, which summarises rather than answers: that
 * run checks the plumbing only, and its scores mean nothing. The last line printed is JSON:
 * `{"model","questions","jScore","f1","unjudged","byCategory":{…},"tokens":{"input","output"}}`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { MemoryClient } from '../functions/api/client.js';
import { locomoToTurns, type LocomoConversation } from '../infra/local/locomo.js';
import { type LocalHarness, startHarness } from '../infra/local/harness.js';
import { BedrockConverseModel } from '../lib/model/bedrock-converse-model.adapter.js';
import { LOCOMO_FILES, replayWithNextDay } from './locomo-quality.js';
import { printReport } from './print-report.js';

interface Qa {
  question: string;
  answer?: string | number;
  category: number;
}

export const ANSWER_SYSTEM = `You answer questions about a long conversation between two people, using only the memories
given (excerpts of the conversation and notes about it, each with its date when known). Answer in
a few words, as a fact: a name, a date, a place, a short phrase. If the memories do not say, answer
"not mentioned".`;

export const JUDGE_SYSTEM = `You grade an answer to a question about a conversation against the gold answer. The answer is
correct when it states the same fact as the gold answer, in any wording; a date is correct when it
names the same day, month or year as the gold answer does, however written. Extra detail that does
not contradict the gold answer is fine. Record your verdict with the tool.`;

export const VERDICT_TOOL = {
  name: 'record_verdict',
  description: 'Record whether the answer is correct.',
  schema: { type: 'object', properties: { correct: { type: 'boolean' } }, required: ['correct'] },
};

/** The answer prompt: the memories, best first, each with its date; then the question. */
export function answerPrompt(question: string, memories: ReadonlyArray<{ text: string; createdAt?: string }>): string {
  const lines = memories.map(
    (m, i) => `[${i + 1}]${m.createdAt ? ` (${m.createdAt.slice(0, 10)})` : ''} ${m.text.replace(/\s+/g, ' ').trim()}`,
  );
  return `Memories:\n${lines.join('\n')}\n\nQuestion: ${question}\nAnswer:`;
}

export const judgePrompt = (question: string, gold: string, answer: string): string =>
  `Question: ${question}\nGold answer: ${gold}\nAnswer: ${answer}`;

/** The judge's verdict from its tool input, or null when it gave none. */
export function verdictOf(output: unknown): boolean | null {
  const correct = (output as { correct?: unknown } | null)?.correct;
  return typeof correct === 'boolean' ? correct : null;
}

const tokens = (s: string): string[] =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)
    .filter((t) => t && !['a', 'an', 'the', 'and'].includes(t));

/** LoCoMo's token F1 of an answer against the gold answer (lower case, punctuation and articles dropped). */
export function tokenF1(answer: string, gold: string): number {
  const a = tokens(answer);
  const g = tokens(gold);
  if (a.length === 0 || g.length === 0) return a.length === g.length ? 1 : 0;
  const left = new Map<string, number>();
  for (const t of g) left.set(t, (left.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of a) {
    const n = left.get(t) ?? 0;
    if (n > 0) {
      same += 1;
      left.set(t, n - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / a.length;
  const recall = same / g.length;
  return (2 * precision * recall) / (precision + recall);
}

interface Score {
  questions: number;
  correct: number;
  unjudged: number;
  f1: number;
}
const emptyScore = (): Score => ({ questions: 0, correct: 0, unjudged: 0, f1: 0 });

interface Eval {
  stack: LocalHarness;
  model: BedrockConverseModel;
  k: number;
  perConversation: number;
  total: Score;
  byCategory: Record<string, Score>;
  usage: { input: number; output: number };
}

/** One question: search, answer from the results, judge against the gold answer. */
async function askAndJudge(run: Eval, memory: MemoryClient, userId: string, qa: Qa): Promise<void> {
  const gold = String(qa.answer ?? '');
  const { results } = await memory.search(userId, { query: qa.question, limit: run.k });
  const answered = await run.model.summarize({
    system: ANSWER_SYSTEM,
    prompt: answerPrompt(qa.question, results),
    temperature: 0,
    maxTokens: 100,
  });
  const judged = await run.model.reflect({
    system: JUDGE_SYSTEM,
    prompt: judgePrompt(qa.question, gold, answered.text),
    toolName: VERDICT_TOOL.name,
    toolDescription: VERDICT_TOOL.description,
    toolInputSchema: VERDICT_TOOL.schema,
    temperature: 0,
    maxTokens: 50,
  });
  for (const usage of [answered.usage, judged.usage]) {
    run.usage.input += usage.inputTokens;
    run.usage.output += usage.outputTokens;
  }
  const verdict = verdictOf(judged.output);
  const category = run.byCategory[qa.category] ?? emptyScore();
  run.byCategory[qa.category] = category;
  for (const score of [run.total, category]) {
    score.questions += 1;
    score.correct += Number(verdict === true);
    score.unjudged += Number(verdict === null);
    score.f1 += tokenF1(answered.text, gold);
  }
}

/** One conversation: replayed on the stack's clock (with the day after it), then its questions asked. */
async function evalConversation(run: Eval, file: string): Promise<void> {
  const name = file.replace(/^.*\//, '').replace(/\.json$/, '');
  const conv = JSON.parse(readFileSync(file, 'utf8')) as LocomoConversation & { qa: Qa[] };
  const userId = `locomo-${name}`;
  const { stack } = run;
  await replayWithNextDay(stack, locomoToTurns(conv, { userId, source: `locomo/${name}` }));
  const memory = new MemoryClient(stack.info.apiUrl, () => stack.info.adminToken);
  const asked = conv.qa
    .filter((qa) => qa.category >= 1 && qa.category <= 4 && typeof qa.question === 'string' && qa.answer !== undefined)
    .slice(0, run.perConversation);
  for (const qa of asked) await askAndJudge(run, memory, userId, qa);
}

const ratio = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 1000) / 1000);
const summary = (s: Score) => ({
  questions: s.questions,
  jScore: ratio(s.correct, s.questions),
  f1: ratio(s.f1, s.questions),
  unjudged: s.unjudged,
});

export async function runEval(options: {
  files: readonly string[];
  model?: string | undefined;
  region: string;
  k: number;
  perConversation: number;
}) {
  const stack = await startHarness({ stage: 'eval', logLevel: 'SILENT' });
  const info = stack.info;
  const client = options.model
    ? new BedrockRuntimeClient({ region: options.region })
    : new BedrockRuntimeClient({
        region: info.region,
        credentials: info.credentials,
        endpoint: info.endpoints.bedrock,
        maxAttempts: 1,
      });
  const modelId = options.model ?? info.modelId;
  const run: Eval = {
    stack,
    model: new BedrockConverseModel(client, modelId),
    k: options.k,
    perConversation: options.perConversation,
    total: emptyScore(),
    byCategory: {},
    usage: { input: 0, output: 0 },
  };
  try {
    for (const file of options.files) await evalConversation(run, file);
  } finally {
    client.destroy();
    await stack.stop();
  }
  return {
    model: options.model ?? `${modelId} (local offline stand-in: plumbing only, scores meaningless)`,
    ...summary(run.total),
    byCategory: Object.fromEntries(Object.entries(run.byCategory).map(([c, s]) => [c, summary(s)])),
    tokens: run.usage,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      region: { type: 'string', default: process.env.AWS_REGION ?? 'us-east-1' },
      quick: { type: 'boolean', default: false },
      questions: { type: 'string', default: '100000' },
      k: { type: 'string', default: '10' },
      dir: { type: 'string' },
    },
    strict: true,
  });
  const dir = values.dir ?? process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname;
  const files = (values.quick ? LOCOMO_FILES.slice(0, 1) : LOCOMO_FILES).map((f) => join(dir, f));
  printReport(
    runEval({
      files,
      model: values.model,
      region: values.region,
      k: Number(values.k),
      perConversation: Number(values.questions),
    }),
  );
}
