/** An in-memory cost ledger for tests. */
import type { CostEntry } from './daily-cost.js';
import type { CostLedger } from './cost-ledger.port.js';

export class MemoryCostLedger implements CostLedger {
  readonly entries = new Map<string, CostEntry>();
  async record(entry: CostEntry) {
    const key = `${entry.userId}/${entry.jobId}`;
    if (!this.entries.has(key)) this.entries.set(key, structuredClone(entry));
  }
  async forUser(userId: string, fromDay: string, toDay: string) {
    return [...this.entries.values()].filter((e) => e.userId === userId && e.day >= fromDay && e.day <= toDay);
  }
  async forDay(day: string) {
    return [...this.entries.values()].filter((e) => e.day === day);
  }
}
