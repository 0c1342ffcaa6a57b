/** The tier entries a pipeline writes and reads (req R-TIER-11): the API's own create, bound to the stores. */
import { isLive } from '../items/memory-item.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { TierEntries } from './tier-entry.port.js';
import { createTierEntry, type TierWriteDeps } from './tiers-api.js';

export function tierEntries(deps: TierWriteDeps & { items: Pick<MemoryItemStore, 'list'> }): TierEntries {
  return {
    write: (userId, tier, entry, actor) => createTierEntry(deps, actor, userId, tier, entry),
    async recent(userId, tier, limit) {
      const now = deps.clock.now();
      const live = (await deps.items.list(userId)).filter(
        (i) => i.tier === tier && i.kind === 'memory' && isLive(i, now),
      );
      return live.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.id.localeCompare(b.id)).slice(0, limit);
    },
  };
}
