/** Per-domain source outcomes, shared by all users. */
import type { SourceObservation, SourceStats } from './source-reliability.js';

/** Per-domain source outcomes, shared by all users (req R-SRC). */
export interface SourceReliabilityStore {
  /**
   * Add each observation (reported by this user's turn) to its domain's counts, once: an
   * observation already counted — a redelivered or republished turn — adds nothing.
   * Returns how many were new.
   */
  record(userId: string, observations: readonly SourceObservation[]): Promise<number>;
  /** The counts of these domains (normalised); empty counts for a domain never seen. */
  stats(domains: readonly string[]): Promise<SourceStats[]>;
}
