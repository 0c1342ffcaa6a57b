/**
 * Each source record as a MemoryItem (req R-DOC-1): a turn, an agent.event's episode, a staged
 * record, a Knowledge document, a summary and a diary entry, with the fields the seed names.
 */
import { type EpisodeSummary, type EventEpisode, eventEpisodeText } from '../turns/episodes.js';
import { type DiaryRecord, diaryPath, diaryVisible } from '../diary/diary.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import type { StagedRecord } from '../knowledge/promotion.js';
import type { MemoryItem } from './memory-item.js';

/** The turn index entry as stored (see the turn store). */
export interface TurnIndexEntry {
  userId: string;
  turnId: number;
  sessionId: string;
  timestamp: string;
  text: string;
  validation?: string | undefined;
  quality?: number | undefined;
  attributes?: Record<string, string> | undefined;
  topic?: string | undefined;
  keywords?: string[] | undefined;
  /** The turn's episode (req R-EPI), when it carried one. */
  episode?: EpisodeSummary | undefined;
}

const base = {
  userPurpose: '',
  dataRequirements: [] as string[],
  deleted: false,
};

export function turnItem(t: TurnIndexEntry): MemoryItem {
  return {
    ...base,
    id: `turn:${t.turnId}`,
    kind: 'turn',
    userId: t.userId,
    path: `turns/${t.turnId}`,
    title: t.episode ? `episode: ${t.episode.goal.slice(0, 120)}` : `turn ${t.turnId}`,
    text: t.text,
    primaryTopic: t.topic ?? '',
    keywords: t.keywords ?? [],
    // "Type is just metadata" (req R-DOC-1): a turn with an episode is found as `episode` too.
    contentTypes: t.episode ? ['context', 'episode'] : ['context'],
    scope: 'user',
    quality: t.quality ?? 0.5,
    confidence: t.quality ?? 0.5,
    tier: 'long_term',
    status: 'canonical',
    createdAt: t.timestamp,
    updatedAt: t.timestamp,
    expiresAt: null,
    sourceTurns: [t.turnId],
    attributes: t.attributes ?? {},
    sessionId: t.sessionId,
  };
}

/** An agent.event's episode (req R-EPI): found as content type `episode`, like a turn that carried one. */
export function episodeItem(e: EventEpisode): MemoryItem {
  const success = e.episode.outcome.success;
  return {
    ...base,
    id: `episode:${e.episodeId}`,
    kind: 'episode',
    userId: e.userId,
    path: `episodes/${e.episodeId}`,
    title: `episode: ${e.episode.goal.slice(0, 120)}`,
    text: eventEpisodeText(e),
    primaryTopic: 'episode',
    keywords: [...new Set(e.episode.actions.map((a) => a.capability))],
    contentTypes: ['episode'],
    scope: 'user',
    // How it went is what a planner weighs: a failed episode is still worth finding, a bit lower.
    quality: success ? 0.7 : 0.6,
    confidence: success ? 0.7 : 0.6,
    tier: 'long_term',
    status: 'canonical',
    createdAt: e.timestamp,
    updatedAt: e.timestamp,
    expiresAt: null,
    sourceTurns: e.turnId !== undefined ? [e.turnId] : [],
    attributes: {},
    ...(e.sessionId !== undefined ? { sessionId: e.sessionId } : {}),
  };
}

const kindContentType: Record<string, string> = {
  fact: 'fact',
  correction: 'correction',
  connection: 'connection',
  open_question: 'open_question',
};

/** A staged record: proposed, scope new, expires when the expiry sweep would delete it. */
export function stagedItem(
  userId: string,
  r: StagedRecord,
  expiryDays: number,
  attributes: Record<string, string>,
): MemoryItem {
  const discarded = r.status === 'discarded';
  return {
    ...base,
    id: `staged:${r.path}`,
    kind: 'staged',
    userId,
    path: `Knowledge_staging/${r.path}`,
    title: r.title,
    text: r.text,
    primaryTopic: r.category.toLowerCase(),
    keywords: [],
    contentTypes: [kindContentType[r.kind] ?? r.kind],
    scope: 'new',
    quality: r.confidence,
    confidence: r.confidence,
    tier: 'long_term',
    status: 'proposed',
    createdAt: r.stagedAt,
    updatedAt: r.stagedAt,
    expiresAt: r.stagedAt ? new Date(Date.parse(r.stagedAt) + expiryDays * 86_400_000).toISOString() : null,
    sourceTurns: r.sourceTurns,
    attributes,
    deleted: discarded,
  };
}

export function knowledgeItem(userId: string, d: KnowledgeDoc, attributes: Record<string, string>): MemoryItem {
  const finding = d.id.startsWith('Reflections/');
  return {
    ...base,
    id: `knowledge:${d.id}`,
    kind: 'knowledge',
    userId,
    path: `Knowledge/${d.id}`,
    title: d.title,
    text: d.text,
    primaryTopic: d.category.toLowerCase(),
    keywords: [],
    contentTypes: [finding ? 'finding' : d.category === 'Preferences' ? 'preference' : 'fact'],
    scope: 'user',
    quality: d.confidence,
    confidence: d.confidence,
    // Contradicted below the long-term floor (lib/knowledge/fact-contradiction.ts): one tier down.
    tier: d.demotedAt ? 'short_term' : 'long_term',
    status: d.demotedAt ? 'short_term' : 'canonical',
    createdAt: d.promotedAt,
    updatedAt: d.verifiedAt ?? d.promotedAt,
    expiresAt: null,
    sourceTurns: d.sourceTurns,
    attributes,
    // Fact hygiene: a pruned fact is hidden until restored (or seen again), then removed.
    deleted: d.prunedAt !== undefined,
    ...(d.history?.length ? { history: d.history } : {}),
  };
}

export interface SummaryRecordView {
  userId: string;
  id: string;
  kind: string;
  createdAt: string;
  sourceTurns: number[];
  text: string;
  deleted: boolean;
  /** The session of its newest turn (summaries written since they carry their session's previous one). */
  sessionId?: string;
  /** The session's previous summary it carried forward (lib/summaries/summary.ts `summaryContext`). */
  carried?: string;
  /** The system part of the pair: the instruction the summary was written to. */
  prompt?: string;
  /** People's edits of the text, oldest first: what it said before each. */
  edits?: SummaryEdit[];
  /** Times memory.search or memory.retrieve returned it (req R-SUM-10's quality metrics). */
  resurrections?: number;
  /** Times it was returned while deleted (never, if deletion holds). */
  resurrectionsWhileDeleted?: number;
  /** The pair's markdown document (both turns, front matter), rendered from the record (not an S3 object). */
  markdown?: string;
}

export interface SummaryEdit {
  at: string;
  by: string;
  /** The text before this edit. */
  previous: string;
  reason?: string;
}

/**
 * Req R-SUM-5: a summary is a turn pair in the conversation, after the last turn it covers — the
 * system message (its instruction) and the assistant's answer, each marked `reflection: true` (the field the API has always carried).
 */
export function summaryMessages(r: Pick<SummaryRecordView, 'prompt' | 'text' | 'sourceTurns'>) {
  return {
    afterTurn: r.sourceTurns.length > 0 ? Math.max(...r.sourceTurns) : 0,
    messages: [
      { role: 'system' as const, reflection: true as const, text: r.prompt ?? '' },
      { role: 'assistant' as const, reflection: true as const, text: r.text },
    ],
  };
}

export function summaryItem(r: SummaryRecordView, attributes: Record<string, string>): MemoryItem {
  return {
    ...base,
    id: `summary:${r.id}`,
    kind: 'summary',
    userId: r.userId,
    path: `summaries/${r.id}`,
    title: `summary ${r.id}`,
    text: r.text,
    primaryTopic: 'summary',
    keywords: [],
    contentTypes: ['summary'],
    scope: 'user',
    quality: 0.6,
    confidence: 0.6,
    tier: 'long_term',
    status: 'canonical',
    createdAt: r.createdAt,
    updatedAt: r.createdAt,
    expiresAt: null,
    sourceTurns: r.sourceTurns,
    attributes,
    deleted: r.deleted,
    pair: summaryMessages(r),
    ...(r.edits?.length ? { updatedAt: r.edits.at(-1)?.at ?? r.createdAt } : {}),
  };
}

/**
 * A diary entry (req R-EVT, R-DIARY): content type `diary`, and `reflection_entry` or
 * `observation` by its type. Hidden (deleted) when the criteria rejected it and nobody kept it, or a person
 * dropped it.
 */
export function diaryItem(r: DiaryRecord): MemoryItem {
  const confidence = r.reflection?.confidence ?? r.emotion?.confidence ?? 0.5;
  return {
    ...base,
    id: `diary:${r.id}`,
    kind: 'diary',
    userId: r.userId,
    path: diaryPath(r.id),
    title: r.reflection ? `reflection after ${r.trigger}: ${r.reflection.insight.slice(0, 80)}` : `diary ${r.id}`,
    text: r.text,
    primaryTopic: 'diary',
    keywords: [],
    // `reflection_entry`, not `reflection`: the batch reflector's entry, apart from the summaries (kind `summary`).
    contentTypes: ['diary', r.type === 'reflection' ? 'reflection_entry' : 'observation'],
    scope: 'user',
    quality: confidence,
    confidence,
    tier: 'long_term',
    status: 'canonical',
    createdAt: r.at,
    updatedAt: r.override?.at ?? r.at,
    expiresAt: null,
    sourceTurns: r.turns,
    attributes: {},
    deleted: !diaryVisible(r),
  };
}
