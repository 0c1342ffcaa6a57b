/**
 * One metadata model for every memory item (req R-DOC-1: "everything is a document").
 * Turns, staged and promoted knowledge, summaries, saved preferences and facts, tier
 * entries: all are presented, searched and retrieved as a MemoryItem. "Type is just
 * metadata": `kind` and `contentTypes` tell them apart, not separate storage systems.
 *
 * The seed's fields are here under camelCase names: primary_topic → primaryTopic,
 * user_purpose → userPurpose, data_requirements → dataRequirements, content_types →
 * contentTypes, created_at → createdAt, expires_at → expiresAt. Added: tier and status
 * (req R-TIER), confidence, provenance (sourceTurns, the turns' attributes), deleted.
 */
import * as z from 'zod';
import { MAX_ATTRIBUTE_BYTES, utf8Bytes } from '../../events/common.js';
import { type EpisodeSummary, type EventEpisode, eventEpisodeText } from '../turns/episodes.js';
import { type DiaryRecord, diaryPath, diaryVisible } from '../diary/diary.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import type { StagedRecord } from '../knowledge/promotion.js';

export const TierSchema = z.enum(['ephemeral', 'short_term', 'long_term']);
export type Tier = z.infer<typeof TierSchema>;

/** Req R-TIER-1's CWMState envelope: staged knowledge is `proposed`, promoted knowledge `canonical`. */
export const StatusSchema = z.enum(['ephemeral', 'short_term', 'proposed', 'canonical']);
export type Status = z.infer<typeof StatusSchema>;

/** Req R-SCOPE: trust level. */
export const ScopeSchema = z.enum(['new', 'user', 'global']);
export type Scope = z.infer<typeof ScopeSchema>;

/**
 * Seed 004's signs that an ephemeral entry matters ("Ephemeral → Short-term Promotion"):
 * `user_signal` "User explicitly marked something important", `behaviour_change` "Changed how
 * agent should act", `novel_fact` "New information not in HCG", `open_question` "Open
 * curiosity that warrants follow-up". The fifth, "Recurrence", is counted (`occurrences`).
 */
export const SignificanceSchema = z.enum(['user_signal', 'behaviour_change', 'novel_fact', 'open_question']);
export type Significance = z.infer<typeof SignificanceSchema>;

const SeenSchema = z.object({ sessions: z.array(z.string()), at: z.string(), confidence: z.number().min(0).max(1) });

export const KindSchema = z.enum(['turn', 'staged', 'knowledge', 'summary', 'memory', 'episode', 'diary']);
export type Kind = z.infer<typeof KindSchema>;

export const MemoryItemSchema = z.object({
  /** Unique per user: `turn:12`, `staged:Facts/x--b1.md`, `knowledge:Facts/x.md`, `summary:summary-1-5`, `mem:…`, `episode:ev-…`, `diary:batch-1-5`. */
  id: z.string(),
  kind: KindSchema,
  /** The owner; `GLOBAL` for items shared with every user. */
  userId: z.string(),
  /** Where the item lives in the user's folder, e.g. `Knowledge/Facts/x.md`. */
  path: z.string(),
  title: z.string(),
  text: z.string(),
  /** Hierarchical topic, e.g. `pet.hamster.syrian`. */
  primaryTopic: z.string(),
  keywords: z.array(z.string()),
  userPurpose: z.string(),
  dataRequirements: z.array(z.string()),
  /** What the item contains: preference, fact, context, summary, correction, … */
  contentTypes: z.array(z.string()),
  scope: ScopeSchema,
  /** 0..1: the item's quality/trust score. */
  quality: z.number().min(0).max(1),
  confidence: z.number().min(0).max(1),
  tier: TierSchema,
  status: StatusSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  /** ISO time after which the item is gone (TTL); null when it persists. */
  expiresAt: z.string().nullable(),
  /** Turn ids the item derives from (a turn's own id for a turn). */
  sourceTurns: z.array(z.number().int()),
  /** The source turns' attributes merged key by key (see mergeAttributes). */
  attributes: z.record(z.string(), z.string()),
  sessionId: z.string().optional(),
  /** Why the pipeline wrote this tier entry (req R-TIER-11), e.g. `new fact staged by batch batch-1-10`; absent on API writes. */
  reason: z.string().optional(),
  /**
   * A tier entry's sightings (lib/tiers/tier-policy.ts): the sessions it was written in, and
   * when and at what confidence it was last seen — the base its decay is computed from.
   */
  seen: SeenSchema.optional(),
  /**
   * An ephemeral entry's signs of significance its writer named (req R-TIER-11, seed 004's
   * ephemeral → short-term criteria); its session's close promotes an entry that has one.
   */
  significance: z.array(SignificanceSchema).optional(),
  /** An ephemeral entry's writes in its session that cited turns no earlier write cited (a retry cites none): 2+ is a recurrence. */
  occurrences: z.number().int().min(1).optional(),
  /** The contradictions an entry took (req R-TIER-8), newest last, each with the state before it: undo restores that. */
  contradictions: z
    .array(
      z.object({
        at: z.string(),
        by: z.string(),
        evidence: z.string().optional(),
        before: z.object({
          tier: TierSchema,
          status: StatusSchema,
          confidence: z.number().min(0).max(1),
          expiresAt: z.string().nullable(),
          seen: SeenSchema.optional(),
        }),
      }),
    )
    .optional(),
  deleted: z.boolean(),
  /** A summary's turn pair (req R-SUM-5): where it sits in the conversation and its two messages. */
  pair: z
    .object({
      afterTurn: z.number().int(),
      messages: z.array(
        z.object({ role: z.enum(['system', 'assistant']), reflection: z.literal(true), text: z.string() }),
      ),
    })
    .optional(),
  /** A Knowledge fact's earlier versions, oldest first: the text before each correction, revert, edit or restore (lib/knowledge/correction.ts). */
  history: z
    .array(
      z.object({
        at: z.string(),
        change: z.enum(['correction', 'revert', 'edit', 'restore']),
        by: z.string(),
        text: z.string(),
        confidence: z.number(),
        reason: z.string().optional(),
      }),
    )
    .optional(),
});
export type MemoryItem = z.infer<typeof MemoryItemSchema>;

export const GLOBAL_USER = 'GLOBAL';

/** Visible to reads: not soft-deleted and not past its TTL (DynamoDB deletes expired items late). */
export const isLive = (item: Pick<MemoryItem, 'deleted' | 'expiresAt'>, now: Date): boolean =>
  !item.deleted && (item.expiresAt === null || Date.parse(item.expiresAt) > now.getTime());

/**
 * The attributes of an item derived from several turns: key by key, the distinct values
 * of its source turns in turn order, joined with a space (LoCoMo's `dia_ids` are
 * space-separated lists already, so they merge into one list). At most
 * MAX_ATTRIBUTE_BYTES in all, as one turn's: values past that are left out (the turns keep
 * theirs), so an item citing many turns with large attributes still fits a DynamoDB item.
 */
export function mergeAttributes(
  sourceTurns: readonly number[],
  attributesOf: (turnId: number) => Record<string, string> | undefined,
): Record<string, string> {
  const merged = new Map<string, string[]>();
  let bytes = 0;
  for (const t of [...sourceTurns].sort((a, b) => a - b)) {
    for (const [k, v] of Object.entries(attributesOf(t) ?? {})) {
      let values = merged.get(k);
      if (!values) {
        const cost = utf8Bytes(k);
        if (bytes + cost > MAX_ATTRIBUTE_BYTES) continue;
        bytes += cost;
        values = [];
        merged.set(k, values);
      }
      for (const part of v.split(' ')) {
        if (part === '' || values.includes(part)) continue;
        const cost = utf8Bytes(part) + (values.length > 0 ? 1 : 0);
        if (bytes + cost > MAX_ATTRIBUTE_BYTES) continue;
        bytes += cost;
        values.push(part);
      }
    }
  }
  return Object.fromEntries([...merged].map(([k, v]) => [k, v.join(' ')]));
}

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

/**
 * Whether an item is a turn whose reply ends by asking something: its text (the user's message,
 * then the reply) ends with a question mark, ASCII or full-width. In a conversation the user's
 * next turn answers such a question, whatever words it uses (the answer ranking in
 * turn-rankings.ts). A turn whose text was cut short (TURN_SEARCH_TEXT_CHARS) or ends with its
 * episode does not count.
 */
export const asksQuestion = (item: Pick<MemoryItem, 'kind' | 'text'>): boolean =>
  item.kind === 'turn' && /[?\uFF1F]\s*$/.test(item.text);

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
    tier: 'long_term',
    status: 'canonical',
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

/** Map a path (as `memory.retrieve` accepts it) to the item id it names; null if it names none. */
export function itemIdForPath(path: string): string | null {
  const p = path.replace(/^\/+/, '');
  const m = /^turns\/0*(\d+)(?:\/.*)?$/.exec(p);
  if (m) return `turn:${Number(m[1])}`;
  if (p.startsWith('Knowledge_staging/')) return `staged:${p.slice('Knowledge_staging/'.length)}`;
  if (p.startsWith('Knowledge/')) return `knowledge:${p.slice('Knowledge/'.length)}`;
  // `summaries/ID.md` is the pair's document, `summaries/ID/…` its two documents before;
  // `reflections/ID`, the summaries' path before the rename, is still accepted.
  const r = /^(?:summaries|reflections)\/([^/]+?)(?:\.md)?(?:\/.*)?$/.exec(p);
  if (r) return `summary:${r[1]}`;
  const diary = /^diary\/([^/]+?)(?:\.md)?$/.exec(p);
  if (diary) return `diary:${diary[1]}`;
  const ep = /^episodes\/(ev-[0-9a-f]{20})(?:\.md)?$/.exec(p);
  if (ep) return `episode:${ep[1]}`;
  const mem = /^memory\/(?:[a-z_]+\/)?(mem:[^/]+)$/.exec(p);
  if (mem) return mem[1] ?? null;
  return null;
}
