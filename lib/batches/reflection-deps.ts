import type { BatchLogStore } from './batch-log.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { DiaryStore } from '../diary/diary.port.js';
import type { ErasureLog } from '../forget/forget.port.js';
import type { SourceReliabilityStore } from '../sources/source-reliability.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import type { LanguageModel } from '../model/language-model.port.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { TierEntries } from '../tiers/tier-entry.port.js';
import type { TierPolicy } from '../tiers/tier-settings.js';
import type { AuditTrail } from '../items/memory-item.port.js';
import type { DeferredReflections } from '../batch-inference/batch-inference.port.js';

export interface ReflectionDeps {
  turns: TurnStore;
  signalState: SignalStateStore;
  knowledge: KnowledgeStore;
  batchLogs: BatchLogStore;
  /** Per-domain source outcomes (read only here). */
  sources: Pick<SourceReliabilityStore, 'stats'>;
  /** The user's relation graph: connections become edges. */
  graph: GraphStore;
  /** What the batch's model call cost, recorded before the batch log (its commit record). */
  costs: CostLedger;
  /** The diary's entries: every batch's decision; an event's batch reads the latest reflections first. */
  diary: DiaryStore;
  model: LanguageModel;
  clock: Clock;
  log: Log;
  settings: { temperature: number; maxTokens: number; budgetTokens: number };
  /**
   * The job will be delivered again if this attempt fails: an unusable answer throws
   * UnusableModelOutputError (and is not kept) instead of aborting the batch. @default false
   */
  retryUnusableOutput?: boolean;
  /**
   * Tombstones of deleted facts (req R-DEL-2): an item repeating one is rejected by the
   * `deleted` gate, not staged. Absent: no fact was ever deleted (tests of other concerns).
   */
  erasures?: Pick<ErasureLog, 'buried'>;
  /**
   * The user's tier entries (req R-TIER-11): what a batch staged or saw recur enters the
   * short-term tier; an event's reflection reads it. Absent: no tier is fed or read (tests of other concerns).
   */
  tiers?: TierEntries;
  /** The stage's tier policy: what a contradiction costs a Knowledge fact, and its floor (req R-TIER-8). @default DEFAULT_TIER_POLICY */
  tierPolicy?: TierPolicy;
  /** Where a Knowledge fact's contradiction is audited (req R-TIER-8). */
  audit: Pick<AuditTrail, 'appendOnce'>;
  /**
   * Where a routine batch's request is kept for the nightly batch inference job (the stage's
   * `routineInference.batch`, lib/batch-inference/routine-batch.ts), and read back when a later
   * batch asked on demand reflects them first. Absent: every batch asks on demand.
   */
  deferred?: DeferredReflections;
  /** Waits between looks for a batch the signal state does not record yet. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}
