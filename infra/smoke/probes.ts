/**
 * The smoke test's probes: each asks the memory API (as an agent would) or SQS whether one
 * part of the pipeline did its work for the smoke user, and answers ok or not with what it
 * saw. Probes are polled until they pass or the run's deadline; none changes anything.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { getText } from '../../lib/kernel/s3-objects.adapter.js';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { batchFailurePrefix } from '../../lib/kernel/memory-paths.js';
import { type ApiAnswer, describeAnswer, type UserApi } from './api-client.js';
import type { SmokeConversation } from './conversation.js';
import type { SmokeTarget } from './target.js';

export interface ProbeResult {
  ok: boolean;
  detail: string;
  /** Failed for good (an aborted batch, another model): waiting longer cannot change it. */
  final?: boolean;
}

export interface ProbeContext {
  api: UserApi;
  conversation: SmokeConversation;
  /** Fail the batch check unless this model answered (`--model`). */
  expectedModelId?: string | undefined;
}

type Loose = Record<string, unknown>;
const list = (answer: ApiAnswer, field: string): Loose[] | null => {
  const value = (answer.body as Loose | null)?.[field];
  return answer.status === 200 && Array.isArray(value) ? (value as Loose[]) : null;
};
const numbers = (value: unknown): number[] =>
  Array.isArray(value) ? value.filter((n): n is number => typeof n === 'number') : [];

/**
 * Turns indexed: `memory.retrieve` of `turns/{id}` answers each published turn with its
 * text, which the API reads from the turn index and the turn's document in S3.
 * `pending` holds the turns not seen yet; found ones are removed, so later polls ask less.
 */
export async function turnsIndexed(ctx: ProbeContext, pending: Set<number>): Promise<ProbeResult> {
  const byId = new Map(ctx.conversation.turns.map((t) => [t.turnId, t]));
  const answers = await Promise.all(
    [...pending].map(async (id) => [id, await ctx.api.post('/memory/retrieve', { path: `turns/${id}` })] as const),
  );
  const problems: string[] = [];
  for (const [id, answer] of answers) {
    const text = String(((answer.body as Loose | null)?.item as Loose | undefined)?.text ?? '');
    if (answer.status === 200 && text.includes(byId.get(id)?.query ?? '\u0000')) pending.delete(id);
    else if (answer.status !== 404)
      problems.push(`turn ${id}: ${answer.status === 200 ? 'answered with other text' : describeAnswer(answer)}`);
  }
  const total = ctx.conversation.turns.length;
  if (pending.size === 0) return { ok: true, detail: `${total}/${total} turns retrievable with their text` };
  const missing = [...pending].sort((a, b) => a - b);
  return {
    ok: false,
    detail: `${total - missing.length}/${total} turns retrievable; missing turns ${missing.join(', ')}${problems.length ? ` (${problems.slice(0, 3).join('; ')})` : ''}`,
  };
}

/** A batch reflected: the batch log listing holds a completed batch over the smoke turns, with the model that answered. */
export async function batchReflected(ctx: ProbeContext): Promise<ProbeResult> {
  const answer = await ctx.api.get('/batches?limit=50');
  const batches = list(answer, 'batches');
  if (!batches) return { ok: false, detail: `GET /batches: ${describeAnswer(answer)}` };
  const ours = new Set(ctx.conversation.turns.map((t) => t.turnId));
  const mine = batches.filter((b) => numbers(b.turns).some((t) => ours.has(t)));
  const done = mine.find((b) => b.status === 'completed');
  if (!done) {
    const aborted = mine.find((b) => b.status === 'aborted');
    if (aborted)
      return {
        ok: false,
        final: true,
        detail: `batch ${String(aborted.batchId)} aborted: ${String(aborted.error ?? 'no reason in the listing; see its batch log')}`,
      };
    return { ok: false, detail: `no batch log over turns ${[...ours][0]}–${[...ours].at(-1)} yet` };
  }
  const model = typeof done.modelId === 'string' ? done.modelId : undefined;
  const what = `batch ${String(done.batchId)} (${String(done.trigger)}) completed by ${model ?? 'a model the listing does not name'}: ${Number(done.itemsProposed ?? 0)} proposed, ${Number(done.itemsPassed ?? 0)} passed the gates, ${Number(done.staged ?? 0)} staged`;
  if (ctx.expectedModelId !== undefined && model !== ctx.expectedModelId)
    return { ok: false, final: true, detail: `${what}; expected model ${ctx.expectedModelId}` };
  return { ok: true, detail: what };
}

/** A summary written: the session-close summary (a turn pair with its text) over the smoke turns. */
export async function summaryWritten(ctx: ProbeContext): Promise<ProbeResult> {
  const answer = await ctx.api.get('/summaries');
  const summaries = list(answer, 'summaries');
  if (!summaries) return { ok: false, detail: `GET /summaries: ${describeAnswer(answer)}` };
  const ours = new Set(ctx.conversation.turns.map((t) => t.turnId));
  const found = summaries.find(
    (s) => numbers(s.sourceTurns).some((t) => ours.has(t)) && String(s.text ?? '').trim() !== '',
  );
  if (!found) return { ok: false, detail: 'no summary over the smoke turns yet' };
  return {
    ok: true,
    detail: `${String(found.id)} (${String(found.kind)}), ${String(found.text).length} characters over ${numbers(found.sourceTurns).length} turns`,
  };
}

/** Search answers: memory.search for the conversation's own word finds something that holds it. */
export async function searchAnswers(ctx: ProbeContext): Promise<ProbeResult> {
  const { query, word } = ctx.conversation.search;
  const answer = await ctx.api.post('/memory/search', { query, limit: 5 });
  const results = list(answer, 'results');
  if (!results) return { ok: false, detail: `POST /memory/search: ${describeAnswer(answer)}` };
  const hit = results.find((r) =>
    String(r.text ?? '')
      .toLowerCase()
      .includes(word),
  );
  if (!hit)
    return { ok: false, detail: `memory.search "${query}" answered ${results.length} result(s), none with "${word}"` };
  return {
    ok: true,
    detail: `memory.search "${query}": ${results.length} result(s), "${word}" in ${String(hit.kind)} ${String(hit.id)}`,
  };
}

export interface QueueDepth {
  waiting: number;
  inFlight: number;
  delayed: number;
}

/**
 * SQS's approximate counts (GetQueueAttributes). They "may not achieve consistency until at
 * least 1 minute after the producers stop sending messages":
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html
 */
export async function queueDepth(target: SmokeTarget, url: string): Promise<QueueDepth> {
  const res = await target.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = res.Attributes ?? {};
  return {
    waiting: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * Why jobs of this user failed, where the reflector recorded it: the aborted log
 * it writes under `users/{u}/Logs/reflector/failed/` when it parks a job (req R-ERR).
 * Best effort: reading needs s3:ListBucket on that prefix, s3:GetObject and kms:Decrypt;
 * without them the answer says so instead.
 */
export async function failureReasons(target: SmokeTarget, userId: string): Promise<string[]> {
  const prefix = batchFailurePrefix(userId);
  try {
    const listed = await target.s3.send(
      new ListObjectsV2Command({ Bucket: target.bucketName, Prefix: prefix, MaxKeys: 5 }),
    );
    const reasons: string[] = [];
    for (const key of (listed.Contents ?? []).map((o) => o.Key ?? '')) {
      const log = JSON.parse(await getText(target.s3, target.bucketName, key)) as {
        batch_id?: string;
        error?: { message?: string };
      };
      reasons.push(`${log.batch_id ?? key}: ${log.error?.message ?? 'no message'}`);
    }
    return reasons;
  } catch (error) {
    return [
      `could not read s3://${target.bucketName}/${prefix} (${(error as Error).name}): read it with credentials that may`,
    ];
  }
}
