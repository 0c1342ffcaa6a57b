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
        change: z.enum(['correction', 'revert', 'edit', 'restore', 'contradiction']),
        by: z.string(),
        text: z.string(),
        confidence: z.number(),
        reason: z.string().optional(),
        demotedAt: z.string().optional(),
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

/**
 * Whether an item is a turn whose reply ends by asking something: its text (the user's message,
 * then the reply) ends with a question mark, ASCII or full-width. In a conversation the user's
 * next turn answers such a question, whatever words it uses (the answer ranking in
 * turn-rankings.ts). A turn whose text was cut short (TURN_SEARCH_TEXT_CHARS) or ends with its
 * episode does not count.
 */
export const asksQuestion = (item: Pick<MemoryItem, 'kind' | 'text'>): boolean =>
  item.kind === 'turn' && /[?\uFF1F]\s*$/.test(item.text);

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
