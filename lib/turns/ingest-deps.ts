import type { Job } from '../../events/job.js';
import type { SignalConfig } from '../signals/signal-weights.js';
import type { RedactionCounts, RedactionPolicy } from './redaction.js';
import type { ClaimCheckStore, RejectedEventLog, TurnStore } from './turn.port.js';
import type { ForgetLog } from '../forget/forget.port.js';
import type { UserSettingsStore } from '../settings/user-settings.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { SourceReliabilityStore } from '../sources/source-reliability.port.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { IdleScheduler, SignalStateStore } from '../signals/signal-state.port.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { TierPolicy } from '../tiers/tier-settings.js';

export interface IngestRecord {
  messageId: string;
  body: string;
}

export interface IngestDeps {
  turns: TurnStore;
  signalState: SignalStateStore;
  jobs: JobQueue;
  idle: IdleScheduler;
  claims: ClaimCheckStore;
  rejected: RejectedEventLog;
  /** Where the sources turns report are counted (req R-SRC). */
  sources: SourceReliabilityStore;
  /** The user's own settings: their inactivity threshold (lib/settings/user-settings.ts). */
  settings: Pick<UserSettingsStore, 'get'>;
  /** Tier entries: a session's close promotes its ephemeral ones that matter and clears the rest (lib/tiers/tier-review.ts). */
  items: Pick<MemoryItemStore, 'get' | 'move' | 'sessionEphemera'>;
  /** The stage's tier policy (lib/tiers/tier-settings.ts) a session's close applies; unset: the defaults. */
  tierPolicy?: TierPolicy | undefined;
  clock: Clock;
  log: Log;
  config: SignalConfig;
  /** What is redacted before a turn is stored or sent to a model (lib/turns/redaction.ts). */
  redaction: RedactionPolicy;
  /** Name of the source, recorded with rejects (e.g. the queue name). */
  source: string;
  /** Users' erasures (lib/forget/forget-user.ts): read only for a user with no signal state. */
  forgets: Pick<ForgetLog, 'latest'>;
}

export interface IngestResult {
  /** Records to hand back to the queue (their user's processing failed). */
  failedMessageIds: string[];
  accepted: number;
  duplicates: number;
  late: number;
  rejected: number;
  controlEvents: number;
  /** Messages the signal state had folded in already (their earlier delivery's write landed): nothing done. */
  alreadyApplied: number;
  jobs: Job[];
  /** Secrets and personal identifiers redacted, by kind (never their values). */
  redacted: RedactionCounts;
  /** Messages from before their user was forgotten, arriving after: dropped. */
  forgotten: number;
}
