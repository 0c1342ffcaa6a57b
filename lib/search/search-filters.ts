/**
 * memory.search's filters (req R-DOC-3): what each one keeps, applied before ranking.
 */
import * as z from 'zod';
import { KindSchema, type MemoryItem, ScopeSchema, TierSchema } from '../items/memory-item.js';
import { epochMs } from './search-blend.js';

export const SearchFiltersSchema = z
  .object({
    /** Items whose primaryTopic is this topic or below it (`pet` matches `pet.hamster`). */
    topic: z.string().min(1).max(200).optional(),
    contentTypes: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
    scope: z.array(ScopeSchema).min(1).optional(),
    tier: z.array(TierSchema).min(1).optional(),
    /** Only these kinds. Without it every kind but `staged` (unvetted output of one batch) and `diary` (the agent's own entries, found also by content type `diary`). */
    kind: z.array(KindSchema).min(1).optional(),
    minQuality: z.number().min(0).max(1).optional(),
    /** Only items created within this many days of now. */
    maxAgeDays: z.number().positive().max(36_500).optional(),
    /** Include items of the GLOBAL scope shared with every user. @default true */
    includeGlobal: z.boolean().optional(),
  })
  .strict();
export type SearchFilters = z.infer<typeof SearchFiltersSchema>;

type Filterable = Pick<
  MemoryItem,
  'primaryTopic' | 'contentTypes' | 'scope' | 'tier' | 'kind' | 'quality' | 'createdAt'
> & {
  sessionId?: string | null | undefined;
};

/**
 * An ephemeral entry belongs to its session (req R-TIER-1): only a search made in that session
 * (`sessionId`) sees it; one made in none, or in another, never does, nor does any search see an
 * entry written in no session. The index keeps an item's tier, not its status: an entry's status
 * is `ephemeral` exactly when its tier is (lib/tiers/memory-tiers.ts). Other tiers: every search.
 */
export const inSession = (item: Pick<Filterable, 'tier' | 'sessionId'>, sessionId: string | undefined): boolean =>
  item.tier !== 'ephemeral' || (sessionId !== undefined && item.sessionId === sessionId);

/** Whether an item passes the filters and is visible to a search made in `sessionId` (inSession). */
export function matchesFilters(
  item: Filterable | (Omit<Filterable, 'createdAt'> & { createdAt: number }),
  f: SearchFilters,
  now: Date,
  sessionId?: string,
): boolean {
  if (!inSession(item, sessionId)) return false;
  if (f.topic && !(item.primaryTopic === f.topic || item.primaryTopic.startsWith(`${f.topic}.`))) return false;
  if (f.contentTypes && !item.contentTypes.some((c) => f.contentTypes?.includes(c))) return false;
  if (f.scope && !f.scope.includes(item.scope)) return false;
  if (f.tier && !f.tier.includes(item.tier)) return false;
  // Staged items are unvetted, single-batch output (req R-STG-2: staging is "NOT searched"):
  // a search returns them only when it asks for them by kind (the review console has its own route).
  // Diary entries are about the agent's own conduct, not the user: found when asked for, by kind
  // or by content type `diary`, so they never crowd the user's facts out of an ordinary search.
  if (
    f.kind
      ? !f.kind.includes(item.kind)
      : item.kind === 'staged' || (item.kind === 'diary' && !f.contentTypes?.includes('diary'))
  )
    return false;
  if (f.minQuality !== undefined && item.quality < f.minQuality) return false;
  if (f.maxAgeDays !== undefined && now.getTime() - epochMs(item.createdAt) > f.maxAgeDays * 86_400_000) return false;
  return true;
}
