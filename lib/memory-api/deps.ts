/** The dependencies every memory API use case is given, and the not-found error they share. */
import type { EmbeddingModel } from '../model/language-model.port.js';
import type { SearchIndexReader } from '../search/search-index-reader.js';
import { MemoryApiError } from './memory-api-error.js';
import type { AgentEventPublisher, TurnStore } from '../turns/turn.port.js';
import type { AuditTrail, MemoryItemStore } from '../items/memory-item.port.js';
import type { ErasureLog, ItemEraser, ForgetLog } from '../forget/forget.port.js';
import type { UserArchiveStore } from '../archive/user-archive.port.js';
import type { UserSettingsStore } from '../settings/user-settings.port.js';
import type { ItemTrustStore } from '../trust/item-trust.port.js';
import type { SourceReliabilityStore } from '../sources/source-reliability.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { MemoryCatalog } from '../search/search-index.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { SleepTimeLogStore } from '../sleep-time/sleep-time-log.port.js';
import type { DiaryStore } from '../diary/diary.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { BatchLogReader } from '../batches/batch-log.port.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import type { Log, Clock } from '../kernel/runtime.port.js';
import type { SummaryStore } from '../summaries/summary.port.js';
import type { TierPolicy } from '../tiers/tier-settings.js';

export interface MemoryApiDeps {
  catalog: MemoryCatalog;
  /** The per-owner search indexes (search-index.ts). */
  search: SearchIndexReader;
  /**
   * The stage's embedding model (unset: the stage does not embed). Each search embeds
   * its query once and fuses the vector ranking with the lexical ones (memory-search.ts rankIndex).
   */
  embeddings?: EmbeddingModel | undefined;
  items: MemoryItemStore;
  /** Derived items' trust records (req R-SCOPE-2: lib/trust/trust-api.ts recordOutcome). */
  trust: ItemTrustStore;
  audit: AuditTrail;
  turns: TurnStore;
  knowledge: KnowledgeStore;
  summaries: SummaryStore;
  runs: SleepTimeLogStore;
  batchLogs: BatchLogReader;
  /** Per-domain source outcomes, shared by all users (read only here). */
  sources: Pick<SourceReliabilityStore, 'stats'>;
  /** The user's relation graph (lib/graph/graph-use-cases.ts serves it). */
  graph: GraphStore;
  /** The job queue (`QUEUES.job` in infra): summaries asked for on demand (req R-SUM-9's manual summary). */
  jobs: JobQueue;
  /** The TurnQueue: a batch reflection asked for on demand travels as an agent.event. */
  events: AgentEventPublisher;
  /** What each job's model calls cost (read only here: GET …/costs). */
  costs: CostLedger;
  /** The user's own summary settings (GET and POST …/settings). */
  settings: UserSettingsStore;
  /** The diary's entries (GET …/diary, and a person's keep or drop: lib/diary/diary-api.ts). */
  diary: DiaryStore;
  /** Read only: which turns the user's next summary would cover. */
  signalState: Pick<SignalStateStore, 'load'>;
  /** Users' erasures (lib/forget/forget-user.ts): DELETE /v1/users/{u} and its receipt. */
  forgets: ForgetLog;
  /** A user's records and documents whole: GET …/export and POST …/import (lib/archive/archive-api.ts). */
  archives: UserArchiveStore;
  /** Tombstones of deleted facts and the turns forgotten by provenance (req R-DEL-2, R-DEL-4). */
  erasures: ErasureLog;
  /** Hard deletion of single items, every S3 version of their objects (req R-DEL-1, R-DEL-3). */
  eraser: ItemEraser;
  clock: Clock;
  /** The stage's tier policy (lib/tiers/tier-settings.ts); unset: the defaults. */
  tierPolicy?: TierPolicy | undefined;
  /** Where a search notes an index whose watermark is older than its marks' TTL (search.ts viewOf). */
  log?: Pick<Log, 'warn'>;
}

export const notFound = (what: string) => new MemoryApiError('not_found', `${what} not found`);
