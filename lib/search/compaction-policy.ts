/**
 * When a search index is compacted (lib/search/search-index.ts): the thresholds of marks and
 * turns past which the API or the reflector folds an owner's changes, and how far behind its
 * start a compaction's watermark stays (L) and how old it may grow.
 */
import { SEARCH_MARK_TTL_MS } from '../kernel/memory-paths.js';

/** Marks past which the API compacts an owner itself. */
export const COMPACT_AT = 256;
/**
 * Turns above the turn watermark past which the API compacts an owner itself: a search reads
 * them whole (a Query, ≤ ~1.5 KB a turn, strongly consistent: about 24 read units at 64).
 */
export const COMPACT_TURNS_AT = 64;
/**
 * Marks a batch or summary job leaves for a later compaction: below this the reflector does
 * not write a delta (an S3 PUT per job would cost more than the marks' reads save); nightly and
 * weekly runs fold whatever there is.
 */
export const COMPACT_AFTER_JOB = 32;
/**
 * L: how long after a writer chose a mark's `at` its write can still land. A compaction that
 * starts at s moves the watermark to s − L at most, so a mark still in flight is never below
 * it. A write lasts no longer than the invocation that sends it: the longest function timeout
 * (the sweep's 300 s, infra/resources.ts) and as much again for what is on the wire and for
 * clocks apart. The local harness, whose writes land within their call, sets a few seconds.
 */
export const MARK_LAG_MS = 600_000;
/** An owner whose watermark is older than this is compacted by a search (so that it never nears the marks' TTL). */
export const WATERMARK_REFRESH_MS = SEARCH_MARK_TTL_MS / 2;

/** The marks' clock and L (MARK_LAG_MS), injected by the local harness and tests. */
export interface MarkTiming {
  now?: () => Date;
  lagMs?: number;
}
