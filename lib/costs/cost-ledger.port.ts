/** The cost ledger: what each job's model calls cost. */
import type { CostEntry } from './daily-cost.js';

/** What each job's model calls cost (lib/costs/daily-cost.ts). */
export interface CostLedger {
  /** Record a job's cost; idempotent by user and job: the first entry stays. */
  record(entry: CostEntry): Promise<void>;
  /** The user's entries of the days from `fromDay` to `toDay` (YYYY-MM-DD, inclusive). */
  forUser(userId: string, fromDay: string, toDay: string): Promise<CostEntry[]>;
  /** Every user's entries of one day. */
  forDay(day: string): Promise<CostEntry[]>;
}
