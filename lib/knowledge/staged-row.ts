/** A staged record as a DynamoDB item stores it, and back (lib/knowledge/knowledge-store.adapter.ts writes and reads it). */
import type { StagedRecord } from './promotion.js';
import { stagedBody, stagedMetaHead } from './staging.js';

/**
 * A staged record as stored: without what its other attributes say again — the
 * front matter's first fields (`stagedMetaHead`, lib/knowledge/staging.ts) and a body that is the title and text — so the
 * LoCoMo replay's records fit one write unit (1.32 on average before), and so does their gsi1
 * copy and their delete. The front matter's other fields are `extra`; a field or body that
 * differs from the derived one is kept. Records written before hold `meta` and `body` whole.
 */
export function slimStaged(record: StagedRecord): Record<string, unknown> {
  const { meta, body, ...rest } = record;
  const derived = stagedMetaHead(record);
  const extra = Object.fromEntries(
    Object.entries(meta).filter(([k, v]) => !(k in derived) || JSON.stringify(v) !== JSON.stringify(derived[k])),
  );
  return {
    ...rest,
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
    ...(body === stagedBody(record.title, record.text) ? {} : { body }),
  };
}

export function toRecord(item: Record<string, unknown>): StagedRecord {
  const record = storedRecord(item);
  if (item.meta !== undefined) return record;
  return {
    ...record,
    meta: { ...stagedMetaHead(record), ...((item.extra as Record<string, unknown> | undefined) ?? {}) },
    body: typeof item.body === 'string' ? item.body : stagedBody(record.title, record.text),
  };
}

function storedRecord(item: Record<string, unknown>): StagedRecord {
  return {
    path: String(item.path),
    kind: item.kind as StagedRecord['kind'],
    title: String(item.title),
    category: String(item.category),
    text: String(item.text ?? ''),
    confidence: Number(item.confidence ?? 0),
    sourceTurns: (item.sourceTurns as number[] | undefined) ?? [],
    batchId: String(item.batchId),
    stagedAt: String(item.stagedAt ?? ''),
    meta: (item.meta as Record<string, unknown> | undefined) ?? {},
    body: String(item.body ?? ''),
    promotedBy: (item.promotedBy as string[] | undefined) ?? [],
    status: item.status === 'promoted' || item.status === 'discarded' ? item.status : 'staged',
    ...(item.knowledgePath ? { knowledgePath: String(item.knowledgePath) } : {}),
    ...(item.review ? { review: item.review as NonNullable<StagedRecord['review']> } : {}),
  };
}
