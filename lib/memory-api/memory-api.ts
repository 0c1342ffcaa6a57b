/**
 * The memory API's use cases: memory.search / save / retrieve (req R-DOC-4), tiers with
 * promotion and demotion (req R-TIER), scope trust (req R-SCOPE), sleep-time runs and
 * summaries (req R-SLP, R-SUM), and the review of staged items. Authorisation is
 * decided before these run (functions/api); every change names its actor in the audit trail.
 *
 * One module per concept under memory-api/; this one is their public face:
 *   search.ts     memory.search, memory.retrieve
 *   trust.ts      memory.save, validation outcomes moving scope trust
 *   tiers.ts      tier entries: create, list, delete, promote, demote
 *   summaries.ts  sleep-time runs, the self-assessment, summaries
 *   review.ts     staged items' review, batch logs, the audit trail
 *   insights.ts   source reliability, capability confidence
 *   erase.ts      deleting any item;  forget-turns.ts  forgetting turns and what derives from them
 *   paging.ts     page tokens;  deps.ts  what every use case is given
 */
export { MemoryApiError, type MemoryApiErrorKind } from './memory-api-error.js';
export type { MemoryApiDeps } from './deps.js';
export { pageCursor, encodeCursor } from './paging.js';
export { retrieve, search, type SearchResult } from '../search/search-api.js';
export { type Candidate, recordOutcome, save } from '../trust/trust-api.js';
export {
  contradictItem,
  createTierEntry,
  deleteTierEntry,
  demote,
  promote,
  queryTier,
  undoContradiction,
} from '../tiers/tiers-api.js';
export {
  assessment,
  deleteSummary,
  editSummary,
  latestSleepTimeRun,
  listSummaries,
  sleepTimeRuns,
  summaryQualityOf,
  requestSummary,
} from '../summaries/summaries-api.js';
export { editItem, editTarget, restoreItem } from '../items/edits.js';
export { auditTrail, batches, listStagedForReview, reviewDiscard, reviewPromote } from '../knowledge/review-api.js';
export { capabilities, sourceReliability } from './insights.js';
export { deleteItem, ERASED_KINDS, type ErasedKind } from '../forget/erase.js';
export { forgetByProvenance, type ForgetReceipt, MAX_FORGET_TURNS } from '../forget/forget-turns.js';
