/** The recording fakes (lib/{concept}/*.fake.ts) composed into one world that shares one write log, for the fuzz cases. */
import { MemoryForgetLog } from '../../lib/forget/forget.fake.js';
import { MemorySettings } from '../../lib/settings/user-settings.fake.js';
import { MemoryDiary } from '../../lib/diary/diary.fake.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryEventPublisher, RecordingTurnStore, RecordingRejectedLog } from '../../lib/turns/turn.fake.js';
import { WriteLog } from '../../lib/kernel/write-log.fake.js';
import { RecordingSummaryStore } from '../../lib/summaries/summary.fake.js';
import { RecordingSignalState, RecordingIdleScheduler } from '../../lib/signals/signal-state.fake.js';
import { RecordingJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { RecordingBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { RecordingSleepTimeLog } from '../../lib/sleep-time/sleep-time-log.fake.js';
import { RecordingKnowledgeStore, RecordingExpiryLog } from '../../lib/knowledge/knowledge.fake.js';
import { FakeCatalog, CatalogSearchIndex } from '../../lib/search/search-index.fake.js';
import { RecordingGraphStore } from '../../lib/graph/graph.fake.js';
import { RecordingSourceReliability } from '../../lib/sources/source-reliability.fake.js';
import { RecordingMemoryItems, RecordingAudit } from '../../lib/items/memory-item.fake.js';
import { RecordingItemTrust } from '../../lib/trust/item-trust.fake.js';
import { RecordingArchiveStore } from '../../lib/archive/user-archive.fake.js';

/** Every recording fake, sharing one write log. */
export function recordingWorld() {
  const writes = new WriteLog();
  const turns = new RecordingTurnStore(writes);
  const knowledge = new RecordingKnowledgeStore(writes);
  const summaries = new RecordingSummaryStore(writes);
  const audit = new RecordingAudit(writes);
  const items = new RecordingMemoryItems(writes, audit);
  const trust = new RecordingItemTrust(writes, audit);
  const catalog = new FakeCatalog({ turns, knowledge, summaries, items, stagedExpiryDays: 14 });
  return {
    writes,
    turns,
    signalState: new RecordingSignalState(writes),
    jobs: new RecordingJobQueue(writes),
    costs: new MemoryCostLedger(),
    diary: new MemoryDiary(),
    settings: new MemorySettings(),
    forgets: new MemoryForgetLog(),
    archives: new RecordingArchiveStore(writes),
    events: new MemoryEventPublisher(),
    idle: new RecordingIdleScheduler(writes),
    rejected: new RecordingRejectedLog(writes),
    sources: new RecordingSourceReliability(writes),
    graph: new RecordingGraphStore(writes),
    knowledge,
    batchLogs: new RecordingBatchLogStore(writes),
    summaries,
    runs: new RecordingSleepTimeLog(writes),
    expiryLog: new RecordingExpiryLog(writes),
    items,
    audit,
    trust,
    catalog,
    search: new CatalogSearchIndex(catalog),
  };
}
export type RecordingWorld = ReturnType<typeof recordingWorld>;
