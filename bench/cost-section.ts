/**
 * `npm run bench -- --only cost`: the honest bill of a LoCoMo replay
 * (bench/bill.ts), the model tokens per turn by job kind at three model choices, and Amazon
 * Bedrock AgentCore Memory beside it, like for like.
 */
import { stageConfig } from '../infra/config/stages.js';
import { synthesizeStage } from '../infra/local/iam/synthesized-stage.js';
import type { AnswerShape } from '../lib/model/bedrock-models.js';
import { stages } from '../infra/config/stages.js';
import {
  CHARS_PER_TOKEN,
  STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS,
  TOOL_USE_SYSTEM_PROMPT_TOKENS,
} from '../infra/local/token-estimate.js';
import { SWEEPS } from '../infra/resources.js';
import { PRICES_AS_OF } from '../lib/sleep-time/model-prices.js';
import { fireTimesBetween } from '../lib/sleep-time/schedule.js';
import { type AllIn, agentCoreAt, allInAt, invokedModels, modelUsdAt } from './all-in.js';
import { ASSUMED, type Bill, type BillLine, billOf, GEO_PREMIUM } from './bill.js';
import { ASSUMED_MODEL_WAIT, OPENSEARCH_SERVERLESS, PRICES_CHECKED } from './cost.js';
import type { QualityResult } from './locomo-quality.js';

const HAIKU = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const NOVA_LITE = 'us.amazon.nova-lite-v1:0';
const NOVA_MICRO = 'us.amazon.nova-micro-v1:0';

/** The model choices the bill is shown at: one model for every job, or one per job kind. */
export const MODEL_CHOICES: ReadonlyArray<{ name: string; models: Record<string, string> }> = [
  { name: 'Claude Haiku 4.5 for every job', models: { default: HAIKU } },
  {
    name: 'Haiku 4.5 for batches, Nova Lite for summaries, nightly and weekly runs',
    models: { default: NOVA_LITE, batch: HAIKU },
  },
  { name: 'Nova Micro for every job', models: { default: NOVA_MICRO } },
];

const usd = (n: number) => (n >= 100 ? `$${n.toFixed(0)}` : n >= 1 ? `$${n.toFixed(2)}` : `$${n.toFixed(3)}`);
const table = (lines: readonly BillLine[]) =>
  [
    '| item | USD | how |',
    '| --- | ---: | --- |',
    ...lines.filter((l) => l.usd > 0 || l.note).map((l) => `| ${l.name} | ${usd(l.usd)} | ${l.note} |`),
  ].join('\n');

export async function costSection(
  quality: QualityResult,
): Promise<{ md: string; json: Record<string, unknown>; log: string[] }> {
  const config = stageConfig('prod');
  const account = '000000000000';
  const stage = await synthesizeStage({
    stage: 'prod',
    env: {
      account,
      region: 'us-east-1',
      partition: 'aws',
      queueUrl: (name) => `https://sqs.us-east-1.amazonaws.com/${account}/${name}`,
    },
  });
  const from = new Date(Date.UTC(2026, 0, 1));
  const to = new Date(from.getTime() + 30 * 86_400_000);
  const sweepFiresPerMonth = SWEEPS.reduce(
    (n, name) => n + fireTimesBetween(config.schedules[name], from, to).length,
    0,
  );
  const input = { quality, stage, memoryMb: config.memoryMb as Record<string, number>, sweepFiresPerMonth };
  const bill = billOf({ ...input, month: 12 });
  const prodModels = invokedModels(config);
  const batch = { batchSleepTime: config.sleepTimeInference.batch };
  const month1 = allInAt(billOf({ ...input, month: 1 }), prodModels, 1, batch);
  const month12 = allInAt(bill, prodModels, 12, batch);
  const agentCore12 = agentCoreAt(bill.recordsPerMillionTurns, 12, month12.modelUsd);
  const allTokens = [...Object.values(bill.tokens), ...Object.values(bill.batchInferenceTokens)];
  const tokensIn = allTokens.reduce((n, t) => n + t.inputTokens, 0);
  const tokensOut = allTokens.reduce((n, t) => n + t.outputTokens, 0);
  // Each choice as the stage runs it: sleep-time at batch prices when prod has them on.
  const choiceUsd = (models: Record<string, string>) =>
    Object.values(modelUsdAt(bill, models, config.sleepTimeInference.batch).byJob).reduce((n, v) => n + v, 0);
  const models = MODEL_CHOICES.map((c) => ({ ...c, usd: choiceUsd(c.models) }));
  const json = {
    infraUsdPer1MTurns: round(bill.infraUsdPer1MTurns),
    fixedUsdPerMonth: round(bill.fixedUsdPerMonth),
    modelUsdPer1MTurns: Object.fromEntries(
      [HAIKU, NOVA_LITE, NOVA_MICRO].map((m) => [m, round(choiceUsd({ default: m }))]),
    ),
    inputTokensPerTurn: Math.round(tokensIn),
    outputTokensPerTurn: Math.round(tokensOut),
    s3PutsPerTurn: round(bill.s3PutsPerTurn),
    dynamoWriteUnitsPerTurn: round(bill.dynamoWriteUnitsPerTurn),
    retrievalUsdPer1MSearches: round(bill.retrievalUsdPer1MSearches),
    allInUsdPer1MTurnsMonth1: round(month1.total),
    allInUsdPer1MTurnsMonth12: round(month12.total),
    agentCoreUsdMonth12: round(agentCore12.builtIn),
    modelUsdByJob: Object.fromEntries(
      ['batch', 'summary', 'nightly', 'weekly'].map((j) => [j, round(month12.modelUsdByJob[j] ?? 0)]),
    ),
    batchInferenceSavingsUsd: round(month12.batchInferenceSavingsUsd),
  };
  const allIn: AllInView = { month1, month12, models: prodModels, agentCore12 };
  return {
    md: render(quality, bill, models, { tokensIn, tokensOut }, allIn),
    json,
    log: [
      ...itemKindLines(quality),
      ...s3ByKeyClassLines(quality),
      `infrastructure per 1M turns $${json.infraUsdPer1MTurns}, fixed $${json.fixedUsdPerMonth}/month (goal ≤ 10), input tokens per turn ${json.inputTokensPerTurn}`,
      `all in per 1M turns + 1M searches: month 1 $${json.allInUsdPer1MTurnsMonth1}, month 12 $${json.allInUsdPer1MTurnsMonth12} (goal ≤ 270); AgentCore built-in month 12 $${json.agentCoreUsdMonth12} (goal ≥ 3× ours: ${(agentCore12.builtIn / month12.total).toFixed(2)}×)`,
    ],
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Per ingest function: the DynamoDB write and read units per turn by item kind (sort-key prefix), largest first, and by operation. */
function itemKindLines(quality: QualityResult): string[] {
  const perTurn = (n: number) => (n / quality.turns).toFixed(2).padStart(6);
  return Object.entries(quality.usage.ingest.byFunction).flatMap(([fn, u]) => {
    const kinds = new Map<string, { w: number; r: number; ops: string[] }>();
    for (const [k, v] of Object.entries(u.ledger)) {
      if (!k.startsWith('ItemKind.')) continue;
      const [kind = '', op = ''] = k.slice('ItemKind.'.length).split('|');
      const e = kinds.get(kind) ?? { w: 0, r: 0, ops: [] };
      e.w += v.writeUnits;
      e.r += v.readUnits;
      e.ops.push(`${op} ${perTurn(v.writeUnits + v.readUnits).trim()}u/${perTurn(v.requests).trim()}req`);
      kinds.set(kind, e);
    }
    const rows = [...kinds]
      .filter(([, e]) => (e.w + e.r) / quality.turns > 0.005)
      .sort(([, a], [, b]) => b.w + b.r / 5 - (a.w + a.r / 5));
    if (rows.length === 0) return [];
    return [
      `${fn}: DynamoDB units per turn by item kind (write, read; per operation: units/requests per turn)`,
      ...rows.map(([kind, e]) => `  ${kind.padEnd(22)} ${perTurn(e.w)} W ${perTurn(e.r)} R  ${e.ops.join(', ')}`),
    ];
  });
}

/** S3 requests per turn by function, operation and class of key (the request ledger's tally), most first. */
function s3ByKeyClassLines(quality: QualityResult): string[] {
  const rows = Object.entries(quality.usage.s3ByKeyClass).sort((a, b) => b[1] - a[1]);
  return [
    'S3 requests per turn by function, operation and key class:',
    ...rows.map(([k, n]) => `  ${(n / quality.turns).toFixed(3)}  ${k}`),
  ];
}

type ModelCosts = ReadonlyArray<{ name: string; models: Record<string, string>; usd: number }>;
interface AllInView {
  month1: AllIn;
  month12: AllIn;
  models: Record<string, string>;
  agentCore12: { builtIn: number; selfManaged: number };
}

function render(
  quality: QualityResult,
  bill: Bill,
  models: ModelCosts,
  t: { tokensIn: number; tokensOut: number },
  allIn: AllInView,
): string {
  return [
    howMeasured(quality),
    allInSection(bill, allIn),
    billSections(bill),
    tokenSection(bill, models, t),
    agentCore(bill, models),
  ].join('\n\n');
}

/** The section's title, what was counted and what had to be assumed. */
function howMeasured(quality: QualityResult): string {
  return `## Cost: the bill per 1M turns

Measured during the LoCoMo replay of the quality section (${quality.turns} turns, ${quality.usage.retrieval.byFunction.api?.invocations ?? 0} searches) and scaled linearly:
"1M turns from users who talk like LoCoMo's" (a session every few days, nightly and weekly runs
in between). Counted from the replay: every AWS request each handler made and DynamoDB's capacity
units (the request ledger, as DynamoDB Local reports them), each invocation's handler time × the
prod stage's memory (the time counted as CPU time, slowed by the function's share of a core: an upper
bound, since waiting on DynamoDB or S3 is not slowed), the bytes the functions logged at prod's log level (${stageConfig('prod').logLevel}) with metrics on,
the custom metrics they emitted, what the table and the bucket hold at the end, and the tokens of
every Converse call. From the synthesized prod stage: alarms, keys, queues with event sources,
each function's tracing. Prices: us-east-1 on-demand, no free tier, checked ${PRICES_CHECKED}
(\`bench/cost.ts\`, \`bench/bill.ts\`; sources in docs/pricing-sources.md).

Assumed, because no local run can show it: a Lambda cold start per ${1 / ASSUMED.coldStartShare} invocations at ${ASSUMED.initMs} ms
(INIT is billed); ${ASSUMED.platformLogBytes} B of platform log lines per invocation (+${ASSUMED.tracedPlatformLogBytes} B traced); ${ASSUMED.pollersPerQueue} pollers per event
source, each an empty ${ASSUMED.longPollSeconds}-s receive; KMS data keys once per 5 minutes per principal and key while busy;
the reflector waiting on a real model (${ASSUMED_MODEL_WAIT.firstTokenSeconds} s per call + ${ASSUMED_MODEL_WAIT.outputTokensPerSecond} output tokens a second), a line of the infrastructure.
The local FIFO poller hands the signal function one message per user at a time, so its rows are
an upper bound (Lambda batches up to 10 of a user's turns).`;
}

/** Per 1M turns, per month standing still, per 1M searches: each a table of lines and its total against the goal. */
function billSections(bill: Bill): string {
  const verdict = (n: number, goal: number) =>
    n <= goal ? `within the goal of $${goal}` : `**over** the goal of $${goal}`;
  return `### What grows with turns: per 1M turns (a month's storage of what they leave included)

${table(bill.perMillionTurns)}

**Infrastructure: ${usd(bill.infraUsdPer1MTurns)} per 1M turns**, a part of the all-in bill (its goal is the whole's).
Of it: the reflector waiting on a real model, ${usd(bill.modelWaitUsdPer1MTurns)} (assumed, above), and a month of holding
what they leave, ${usd(bill.storageUsdPer1MTurns)}, paid again every month it is held (the all-in bill counts the stock).
Per turn: ${bill.s3PutsPerTurn.toFixed(2)} S3 PUTs, ${bill.dynamoWriteUnitsPerTurn.toFixed(2)} DynamoDB write units.
${partsLine(bill)}

### What a stage pays standing still: per month, at month ${bill.month}

${table(bill.fixed)}

**Fixed: ${usd(bill.fixedUsdPerMonth)} a month** — ${verdict(bill.fixedUsdPerMonth, 10)} — ${usd(bill.fixedUsdPerMonth)} per 1M turns at 1M turns a month,
${usd(bill.fixedUsdPerMonth / 10)} at 10M. The Cognito user pool (free up to its tier's monthly active users) is not priced.

### Retrieval: per 1M searches

${table(bill.perMillionSearches)}

**${usd(bill.retrievalUsdPer1MSearches)} per 1M searches.**`;
}

/**
 * The infrastructure bill in three parts: the turn path (the agents' send to the FIFO turn
 * queue, the signal and idle functions: their polls, state and turn items, logs), which every
 * turn pays before any reflection; the reflector; and holding what the turns leave, with KMS.
 */
function billParts(lines: readonly BillLine[]): { turnPath: number; reflector: number; holding: number } {
  const of = (pred: (name: string) => boolean) => lines.filter((l) => pred(l.name)).reduce((n, l) => n + l.usd, 0);
  const turnPath = of((n) => /^(signal|idle):|^agents publishing/.test(n));
  const reflector = of((n) => n.startsWith('reflector:'));
  return { turnPath, reflector, holding: of(() => true) - turnPath - reflector };
}

function partsLine(bill: Bill): string {
  const p = billParts(bill.perMillionTurns);
  return `By part: the turn path (the agents' send, the signal and idle functions) ${usd(p.turnPath)}, holding what turns leave and KMS ${usd(p.holding)} — ${usd(p.turnPath + p.holding)} before any reflection — and the reflector ${usd(p.reflector)}.`;
}

/** Model tokens per job kind and per turn, and what they cost with each model choice. */
function tokenSection(bill: Bill, models: ModelCosts, t: { tokensIn: number; tokensOut: number }): string {
  // What batch inference jobs answered (routine reflections) apart: billed at the batch price.
  const jobs = [
    ...Object.entries(bill.tokens),
    ...Object.entries(bill.batchInferenceTokens).map(([job, v]) => [`${job} (batch inference)`, v] as const),
  ].sort((a, b) => b[1].inputTokens - a[1].inputTokens);
  const tokenTable = [
    '| job kind | calls per 1k turns | input tokens per turn | output tokens per turn |',
    '| --- | ---: | ---: | ---: |',
    ...jobs.map(
      ([job, v]) =>
        `| ${job} | ${(v.calls * 1000).toFixed(0)} | ${v.inputTokens.toFixed(0)} | ${v.outputTokens.toFixed(0)} |`,
    ),
    `| **all** | ${(jobs.reduce((n, [, v]) => n + v.calls, 0) * 1000).toFixed(0)} | ${t.tokensIn.toFixed(0)} | ${t.tokensOut.toFixed(0)} |`,
  ].join('\n');
  return `### Model tokens

Counted as Bedrock bills them, by a calibrated estimate (\`infra/local/token-estimate.ts\`): the system
and message text and the answer's shape at ${CHARS_PER_TOKEN} characters a token (Anthropic's figure
for Claude). ${answerShapeText(stages.dev?.answerShape ?? 'prompt')} Not a tokenizer: Bedrock's
CountTokens gives the exact count in an account. The outputs are the offline model's; an LLM's will differ.

${tokenTable}

| model choice | model tokens per 1M turns |
| --- | ---: |
${models.map((m) => `| ${m.name} | ${usd(m.usd)} |`).join('\n')}

Model prices as of ${PRICES_AS_OF} (\`lib/sleep-time/model-prices.ts\`), the nightly and weekly runs at
batch prices (\`sleepTimeInference.batch\`, on in prod), and so the routine reflections a batch inference
job answered in the replay (\`routineInference.batch\`, on in prod). Nova rows price the same
counts as asked of Claude (with \`answerShape: 'schema'\` Nova Lite takes a forced tool, whose prompt
differs), so they are an estimate.`;
}

/** How the stage asks for structured answers (infra/config/stages.ts \`answerShape\`), and how that is counted. */
function answerShapeText(shape: AnswerShape): string {
  const schema = `structured output (\`outputConfig.textFormat\`) adds a system prompt "explaining the expected output format" of unpublished size, counted as the schema's text plus ${STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS} tokens; a forced tool, for models without structured output, adds Claude 4.5's hidden tool-use prompt of ${TOOL_USE_SYSTEM_PROMPT_TOKENS} tokens`;
  return shape === 'prompt'
    ? `The stage asks for each structured answer in the prompt (\`answerShape: 'prompt'\`): its type, one line of the system prompt, is counted as text, with no hidden prompt (with \`answerShape: 'schema'\`, ${schema}).`
    : `The stage sends each structured answer's JSON schema (\`answerShape: 'schema'\`): ${schema}.`;
}

/** The all-in bill at month 1 and month 12 by part, against the goals, with prod's model per job kind. */
function allInSection(bill: Bill, a: AllInView): string {
  const row = (name: string, f: (x: AllIn) => number) => `| ${name} | ${usd(f(a.month1))} | ${usd(f(a.month12))} |`;
  const jobs = ['batch', 'summary', 'nightly', 'weekly'];
  const ratio = a.agentCore12.builtIn / a.month12.total;
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  return `### All in: what a team pays for 1M turns and 1M searches a month

The \`prod\` stage at a steady 1M turns and 1M searches a month, in its first month and its twelfth.
What turns leave is a stock: month 12 holds twelve months of it. Model tokens per job kind at prod's
models through its inference profile (${jobs.map((j) => `${j} \`${a.models[j]}\``).join(', ')}); Claude 4.5
models' list price is their global profile's, a geographic (\`us.\`) profile bills about ${Math.round((GEO_PREMIUM - 1) * 100)} % more.

| part | month 1 | month 12 |
| --- | ---: | ---: |
${row('infrastructure that does not pile up (with the wait on Bedrock)', (x) => x.flowUsd)}
${row('holding what turns leave (a stock)', (x) => x.storageUsd)}
${row('fixed (with key rotations)', (x) => x.fixedUsd)}
${row('retrieval, 1M searches', (x) => x.retrievalUsd)}
${jobs.map((j) => row(`model: ${j}`, (x) => x.modelUsdByJob[j] ?? 0)).join('\n')}
${row('**all in**', (x) => x.total)}

Goals at month 12: all in ≤ $270 — ${usd(a.month12.total)}, ${met(a.month12.total <= 270)}; AgentCore Memory (built-in
strategies, ${usd(a.agentCore12.builtIn)}) ≥ 3× ours — ${ratio.toFixed(2)}×, ${met(ratio >= 3)}; fixed ≤ $10 a month — ${usd(bill.fixedUsdPerMonth)}, ${met(bill.fixedUsdPerMonth <= 10)}.
The nightly and weekly runs are priced at Bedrock batch inference prices, half the on-demand price
(every sweep at this scale has more than a job's minimum of records), and so are the routine reflections
the replay sent to the night's batch inference job: ${usd(a.month12.batchInferenceSavingsUsd)} a month less.`;
}

/**
 * AgentCore Memory for the same month's work: an event per turn, a long-term record for each
 * staged, promoted, finding or summary document ours makes, a retrieval per search. Records
 * are a stock billed every month they are kept: month 12 holds twelve months' records. Ours
 * keeps a stock too (the storage lines).
 */
function agentCore(bill: Bill, models: ReadonlyArray<{ name: string; usd: number }>): string {
  const records = bill.recordsPerMillionTurns;
  const ours = (month: number, tokens: number) =>
    bill.infraUsdPer1MTurns +
    bill.storageUsdPer1MTurns * (month - 1) +
    bill.fixedUsdPerMonth +
    bill.retrievalUsdPer1MSearches +
    tokens;
  const cell = (f: (month: number) => number) => `${usd(f(1))} / ${usd(f(12))}`;
  const rows = models.map(
    (m) =>
      `| ${m.name} | ${cell((n) => ours(n, m.usd))} | ${cell((n) => agentCoreAt(records, n, m.usd).builtIn)} | ${cell((n) => agentCoreAt(records, n, m.usd).selfManaged)} |`,
  );
  return `### Beside Amazon Bedrock AgentCore Memory

A month of 1M turns and 1M searches, in month 1 and in month 12 of doing so (records kept).
AgentCore: $0.25 per 1,000 events (one per turn), $0.50 per 1,000 retrievals, and per long-term
record a month $0.75 with built-in strategies (extraction tokens included) or $0.25 with
self-managed ones (the team pays its own model tokens — the same tokens as ours). Records: the
${Math.round(records).toLocaleString('en-US')} staged, promoted, finding and summary documents per 1M turns this replay made. Ours:
infrastructure (with the model wait) + fixed (at month ${bill.month}) + retrieval + model tokens, our storage growing as a stock.

| model choice | this service: month 1 / month 12 | AgentCore built-in: month 1 / month 12 | AgentCore self-managed: month 1 / month 12 |
| --- | ---: | ---: | ---: |
${rows.join('\n')}

An OpenSearch-based memory (an OpenSearch Serverless vector collection beside the same functions)
pays its compute floor before any turn: ${OPENSEARCH_SERVERLESS.minOcuRedundant} OCUs with standby replicas at $${OPENSEARCH_SERVERLESS.ocuHour} an OCU-hour,
${usd(openSearchFloor(OPENSEARCH_SERVERLESS.minOcuRedundant))} a month (${usd(openSearchFloor(OPENSEARCH_SERVERLESS.minOcuNoStandby))} without standby replicas, for dev and test), plus
$${OPENSEARCH_SERVERLESS.storageGbMonth} per GB-month stored and the model tokens of its own extraction.`;
}

/** OpenSearch Serverless's compute for a 30-day month at `ocus` OCUs. */
function openSearchFloor(ocus: number): number {
  return ocus * OPENSEARCH_SERVERLESS.ocuHour * 24 * 30;
}
