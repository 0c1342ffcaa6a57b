/**
 * Req R-SUM-10's summary quality metrics: how often summaries are deleted (high: inaccurate),
 * how often they are resurrected — returned to an agent by memory.search or
 * memory.retrieve (high: useful) — and which topics they are about. A deleted summary must
 * never come back: `resurrectionsOfDeleted` counts every time one did, and must stay 0.
 */
import type { SummaryRecordView } from '../items/source-items.js';
import { contentWords } from '../kernel/text.js';

export interface SummaryQuality {
  summaries: number;
  deleted: number;
  /** deleted ÷ summaries (0 when there are none). */
  deletionRate: number;
  /** Times live summaries were returned to an agent, in all. */
  resurrections: number;
  /** Summaries returned at least once. */
  resurrected: number;
  /** resurrected ÷ live summaries (0 when there are none). */
  resurrectionRate: number;
  /** Times a summary was returned while deleted: must stay 0. */
  resurrectionsOfDeleted: number;
  /**
   * Live summaries that carry their session's previous one forward (lib/summaries/summary.ts
   * `summaryContext`): each stands for its session so far, so a session's topics count once per
   * summary that carries them, and deleting an inaccurate summary leaves the later ones that
   * carried it (delete those too, or forget by their shared source turns).
   */
  carrying: number;
  /** The words the live summaries use most (in how many summaries each appears), most first. */
  topics: Array<{ topic: string; summaries: number }>;
}

const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 1000) / 1000);

export function summaryQuality(records: readonly SummaryRecordView[], topicLimit = 10): SummaryQuality {
  const live = records.filter((r) => !r.deleted);
  const deleted = records.length - live.length;
  const resurrected = live.filter((r) => (r.resurrections ?? 0) > 0).length;
  const topicCounts = new Map<string, number>();
  for (const r of live)
    for (const w of new Set(contentWords(r.text))) topicCounts.set(w, (topicCounts.get(w) ?? 0) + 1);
  return {
    summaries: records.length,
    deleted,
    deletionRate: ratio(deleted, records.length),
    resurrections: live.reduce((n, r) => n + (r.resurrections ?? 0), 0),
    resurrected,
    resurrectionRate: ratio(resurrected, live.length),
    resurrectionsOfDeleted: records.reduce((n, r) => n + (r.resurrectionsWhileDeleted ?? 0), 0),
    carrying: live.filter((r) => r.carried !== undefined).length,
    topics: [...topicCounts.entries()]
      .filter(([, n]) => n > 1 || live.length === 1)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, topicLimit)
      .map(([topic, summaries]) => ({ topic, summaries })),
  };
}
