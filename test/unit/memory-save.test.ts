/**
 * memory.save (req R-SCOPE-1, R-CAND-1): a commit's audit entry is written once, whichever
 * attempt gets there — through the use case, on the in-memory stores.
 */
import { describe, expect, it } from 'vitest';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import type { MemoryApiDeps } from '../../lib/memory-api/deps.js';
import type { AuditEntry } from '../../lib/tiers/memory-tiers.js';
import { save } from '../../lib/trust/trust-api.js';

describe('memory.save audits each commit once', () => {
  it('records the commit when the first attempt died between the item and its audit entry', async () => {
    const entries: AuditEntry[] = [];
    let failures = 1;
    const audit = {
      append: async (e: readonly AuditEntry[]) => void entries.push(...e),
      appendOnce: async (e: AuditEntry) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('connection reset after the item was written');
        }
        if (!entries.some((a) => a.at === e.at && a.itemId === e.itemId && a.action === e.action)) entries.push(e);
      },
    };
    const items = new MemoryItems();
    const deps = {
      clock: fixedClock(),
      items,
      audit,
      turns: { turnIndex: async () => [] },
    } as unknown as MemoryApiDeps;
    const request = { validation: 'APPROVE' as const, candidates: [{ text: 'User keeps a sourdough starter' }] };

    await expect(save(deps, 'agent', 'alice', request)).rejects.toThrow(/connection reset/);
    const retried = await save(deps, 'agent', 'alice', request);
    await save(deps, 'agent', 'alice', request);

    expect(await items.list('alice')).toHaveLength(1);
    expect(entries).toEqual([
      expect.objectContaining({ action: 'commit', itemId: retried.committed[0]?.id, actor: 'agent', to: 'long_term' }),
    ]);
  });
});
