/** What a batch reads before the model is asked (req R-ASM): its turns, the user's Knowledge, the log's common fields. */
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { assembleBatch, occasionOf, type ReflectionOccasion } from './batch-assembly.js';
import type { BatchLog } from './batch-log.js';
import { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import type { EventEpisode } from '../turns/episodes.js';
import {
  eventMaterial,
  NO_TURN_WAITING,
  NOTHING_TO_REFLECT_ON,
  occasionContext,
  SHORT_TERM_SHOWN,
} from './event-reflection.js';
import { topKeywords } from '../kernel/text.js';
import type { ReflectionDeps } from './reflection-deps.js';

/** How many of the batch's top keywords search Knowledge, and how many hits the model sees. */
const EXISTING_KEYWORDS = 10;
const EXISTING_SHOWN = 10;

export type LogBase = Omit<
  BatchLog,
  | 'status'
  | 'quality_gate_results'
  | 'staged_files'
  | 'promoted_files'
  | 'reinforced'
  | 'model'
  | 'error'
  | 'duration_ms'
>;

/** What a batch reads before the model is asked: its turns, the user's Knowledge, and the log's common fields. */
export interface BatchInput {
  turns: TurnSaved[];
  /** Input time of the batch (see readBatch). */
  batchAt: string;
  batch: ReturnType<typeof assembleBatch>;
  knowledgeDocs: KnowledgeDoc[];
  knowledge: KnowledgeSearch<KnowledgeDoc>;
  /** The Knowledge documents the batch's top keywords find, shown to the model. */
  existing: Array<{ path: string; summary: string }>;
  /** The agent.event episodes whose documents this batch writes. */
  eventEpisodes: EventEpisode[];
  /** An event's batch with no turn: the event's own words it reviews instead ('' for any other batch, or nothing to review). */
  material: string;
  /** An event's batch: the short-term memory and plan outcomes it also reads (req R-EVT-2); '' for any other. */
  context: string;
  base: LogBase;
}

export async function readBatch(job: Job, started: Date, deps: ReflectionDeps): Promise<BatchInput> {
  const { turns, missing } =
    job.turnIds.length > 0 ? await deps.turns.getTurns(job.userId, job.turnIds) : { turns: [], missing: [] };
  const eventEpisodes = job.episodeIds?.length ? await deps.turns.eventEpisodes(job.userId, job.episodeIds) : [];
  const occasion = occasionOf(job);
  const material = occasion && job.turnIds.length === 0 ? eventMaterial(occasion, eventEpisodes) : '';
  const context = occasion ? await contextOf(job, occasion, eventEpisodes, material, deps) : '';
  for (const m of missing) deps.log.warn('turn unreadable; continuing without it', { userId: job.userId, ...m });
  // Input time of the batch (its last turn's; the job's when none was read), for when its items
  // were staged (the expiry sweep's cutoff and day index), what it verifies, the edges it adds,
  // its cost entry's day and the weekly run's window: replays and redeliveries agree.
  const batchAt = new Date(
    Math.max(...turns.map((t) => Date.parse(t.timestamp)), 0) || Date.parse(job.requestedAt),
  ).toISOString();
  const batch = assembleBatch(turns, deps.settings.budgetTokens);
  // Req R-ASM: search the user's Knowledge with the batch's top keywords, so the model knows what exists.
  const knowledgeDocs = await deps.knowledge.loadKnowledge(job.userId);
  const knowledge = new KnowledgeSearch(knowledgeDocs);
  const existing = knowledge
    .search(topKeywords(`${batch.document}\n${material}`, EXISTING_KEYWORDS).join(' '), EXISTING_SHOWN)
    .map((h) => ({ path: h.doc.id, summary: h.doc.summary }));
  const base: LogBase = {
    batch_id: job.jobId,
    user_id: job.userId,
    timestamp: started.toISOString(),
    input_at: batchAt,
    turns_reviewed: batch.included,
    turns_missing: missing.map((m) => m.turnId),
    turns_omitted_for_budget: batch.omitted,
    trigger: job.trigger,
    kind: job.kind,
    urgency_score: job.urgency,
    ...(occasion && job.turnIds.length === 0 ? { event_only: eventOnlyLog(job, eventEpisodes, material, deps) } : {}),
  };
  return { turns, batchAt, batch, knowledgeDocs, knowledge, existing, eventEpisodes, material, context, base };
}

/** An event's reflection reads the user's short-term entries, and its episodes' outcomes when turns are what it reviews. */
async function contextOf(
  job: Job,
  occasion: ReflectionOccasion,
  episodes: readonly EventEpisode[],
  material: string,
  deps: ReflectionDeps,
): Promise<string> {
  const shortTerm = deps.tiers ? await deps.tiers.recent(job.userId, 'short_term', SHORT_TERM_SHOWN) : [];
  const outcomes = material === '' && episodes.length > 0 ? eventMaterial({ trigger: occasion.trigger }, episodes) : '';
  return occasionContext(shortTerm, outcomes);
}

/** Req R-EVT: an event's batch with no turn says what it reflected on instead, or why nothing (and logs that). */
function eventOnlyLog(
  job: Job,
  episodes: readonly EventEpisode[],
  material: string,
  deps: ReflectionDeps,
): NonNullable<BatchLog['event_only']> {
  const kinds = [
    ...(job.eventDetail?.trim() ? ['detail' as const] : []),
    ...(episodes.length > 0 ? ['episodes' as const] : []),
  ];
  if (material) return { reason: NO_TURN_WAITING, material: kinds };
  deps.log.info('agent.event not reflected on', {
    userId: job.userId,
    batchId: job.jobId,
    trigger: job.trigger,
    reason: NOTHING_TO_REFLECT_ON,
  });
  return { reason: NO_TURN_WAITING, material: kinds, not_reflected: NOTHING_TO_REFLECT_ON };
}
