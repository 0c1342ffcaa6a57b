/** The review of staged items: the list with each item's way through the gates, promote and discard; the batch logs and the audit trail. */
import { PROMOTIONS_TO_KNOWLEDGE, restagedMarkdown, type StagedRecord } from './promotion.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { promoteStaged } from './promote-staged.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';
import { pageCursor, encodeCursor } from '../memory-api/paging.js';

/**
 * The review list, a page at a time in path order: a page reads at most `limit` staged
 * records (and the batch logs of those it shows), however long the user's history; without
 * `includeDecided` a page shows only the undecided ones among them, so it can hold fewer.
 */
export async function listStagedForReview(
  deps: MemoryApiDeps,
  userId: string,
  q: { includeDecided: boolean; limit: number; nextToken?: string | undefined },
) {
  const after =
    q.nextToken === undefined
      ? undefined
      : pageCursor(q.nextToken, (p) => {
          const [kind, path] = p as unknown[];
          return kind === 'staged' && typeof path === 'string' ? path : null;
        });
  const page = await deps.knowledge.stagedPage(userId, { limit: q.limit, after, undecidedOnly: !q.includeDecided });
  const records = page.records;
  const batchIds = [...new Set(records.flatMap((r) => [r.batchId, ...r.promotedBy]))];
  const logs = new Map(
    (await Promise.all(batchIds.map(async (b) => [b, await deps.batchLogs.get(userId, b)] as const))).filter(
      ([, l]) => l !== null,
    ),
  );
  const staged = records.map((r) => ({
    id: `staged:${r.path}`,
    path: `Knowledge_staging/${r.path}`,
    kind: r.kind,
    title: r.title,
    text: r.text,
    confidence: r.confidence,
    sourceTurns: r.sourceTurns,
    status: r.status,
    promotionCount: r.promotedBy.length,
    promotionsNeeded: PROMOTIONS_TO_KNOWLEDGE,
    ...(r.review ? { review: r.review } : {}),
    history: gateHistory(r, logs),
    // The staged document (req R-STG-1: markdown with front matter), rendered from its record: the same bytes as its S3 object under Knowledge_staging/.
    markdown: restagedMarkdown(r),
  }));
  return { staged, ...(page.next !== undefined ? { nextToken: encodeCursor(['staged', page.next]) } : {}) };
}

/** A staged item's way through the gates: the batch that staged it, the batches that reinforced it, the review. */
function gateHistory(
  r: StagedRecord,
  logs: ReadonlyMap<
    string,
    {
      timestamp: string;
      quality_gate_results: { rejections: Array<{ gate: string; item: string; reason: string }> };
      reinforced: Array<{ staged_file: string; similarity: number }>;
    } | null
  >,
) {
  const staging = logs.get(r.batchId);
  const events: Array<{ at: string; batchId?: string; event: string; detail: string }> = [
    {
      at: r.stagedAt,
      batchId: r.batchId,
      event: 'staged',
      detail: `passed turn_existence, failed_turn, keyword_match, transient_data, related_file_exists, dedup and drift_guard${staging ? `; the same batch's gates rejected ${staging.quality_gate_results.rejections.length} other item(s)` : ''}`,
    },
  ];
  for (const b of r.promotedBy) {
    const log = logs.get(b);
    const hit = log?.reinforced.find((x) => x.staged_file === `Knowledge_staging/${r.path}`);
    events.push({
      at: log?.timestamp ?? '',
      batchId: b,
      event: 'reinforced',
      detail: hit ? `recurred with similarity ${hit.similarity}` : 'recurred',
    });
  }
  if (r.status === 'promoted')
    events.push({ at: '', event: 'promoted', detail: `to Knowledge/${r.knowledgePath ?? ''}` });
  if (r.review)
    events.push({
      at: r.review.at,
      event: `review_${r.review.decision}`,
      detail: `by ${r.review.by}${r.review.reason ? `: ${r.review.reason}` : ''}`,
    });
  return events;
}

async function stagedRecord(deps: MemoryApiDeps, userId: string, path: string): Promise<StagedRecord> {
  const rel = path.replace(/^Knowledge_staging\//, '');
  const [record] = await deps.knowledge.stagedRecords(userId, [rel]);
  if (!record) throw notFound(`staged item ${path}`);
  return record;
}

export async function reviewPromote(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  path: string,
  reason: string | undefined,
): Promise<{ knowledgePath: string; corrected?: true }> {
  const record = await stagedRecord(deps, userId, path);
  if (record.status === 'promoted' && record.knowledgePath) return { knowledgePath: record.knowledgePath };
  if (record.status === 'discarded') throw new MemoryApiError('conflict', `staged item ${record.path} was discarded`);
  const now = deps.clock.now();
  const taken = new Set((await deps.knowledge.loadKnowledge(userId)).map((d) => d.id));
  const { knowledgePath, corrected } = await promoteStaged(deps, userId, record, taken, now.toISOString());
  const review = { decision: 'promoted' as const, by: actor, at: now.toISOString(), ...(reason ? { reason } : {}) };
  await deps.knowledge.recordReview(userId, record.path, review);
  await deps.audit.append([
    {
      userId,
      itemId: `staged:${record.path}`,
      action: 'review_promote',
      actor,
      at: review.at,
      from: 'proposed',
      to: `Knowledge/${knowledgePath}`,
      ...(corrected ? { note: 'a correction: the target document changed (revert to undo)' } : {}),
      ...(reason ? { reason } : {}),
    },
  ]);
  return { knowledgePath, ...(corrected ? { corrected } : {}) };
}

export async function reviewDiscard(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  path: string,
  reason: string | undefined,
): Promise<{ path: string; status: 'discarded' }> {
  const record = await stagedRecord(deps, userId, path);
  if (record.status === 'promoted')
    throw new MemoryApiError(
      'conflict',
      `staged item ${record.path} is already promoted to Knowledge/${record.knowledgePath ?? ''}`,
    );
  if (record.status !== 'discarded') {
    const at = deps.clock.now().toISOString();
    await deps.knowledge.recordReview(userId, record.path, {
      decision: 'discarded',
      by: actor,
      at,
      ...(reason ? { reason } : {}),
    });
    await deps.audit.append([
      {
        userId,
        itemId: `staged:${record.path}`,
        action: 'review_discard',
        actor,
        at,
        from: 'proposed',
        ...(reason ? { reason } : {}),
      },
    ]);
  }
  return { path: `Knowledge_staging/${record.path}`, status: 'discarded' };
}

export async function batches(deps: MemoryApiDeps, userId: string, limit: number) {
  return { batches: await deps.batchLogs.list(userId, limit) };
}

export async function auditTrail(deps: MemoryApiDeps, userId: string, itemId: string | undefined, limit: number) {
  return { entries: await deps.audit.list(userId, { itemId, limit }) };
}
