/** Every port of the ingest and reflection use cases, from the in-memory fakes beside each concept (lib/{concept}/*.fake.ts). */
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import { RecordingLog, fixedClock } from '../../lib/kernel/runtime.fake.js';
import type { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { MemorySignalStateStore, MemoryIdleScheduler } from '../../lib/signals/signal-state.fake.js';
import { MemoryTurnStore, MemoryClaimChecks, MemoryRejectedLog } from '../../lib/turns/turn.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { MemoryBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryDiary } from '../../lib/diary/diary.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemorySourceReliabilityStore } from '../../lib/sources/source-reliability.fake.js';
import { MemoryItems, RecordingAudit } from '../../lib/items/memory-item.fake.js';
import { WriteLog } from '../../lib/kernel/write-log.fake.js';
import { MemorySettings } from '../../lib/settings/user-settings.fake.js';

/** Every port of the reflector's use case in memory, sharing the ingest deps' turns, state, sources and graph. */
export function reflectionDeps(ingest: ReturnType<typeof ingestDeps>, model: ScriptedModel) {
  return {
    turns: ingest.turns,
    signalState: ingest.signalState,
    knowledge: new MemoryKnowledgeStore(),
    batchLogs: new MemoryBatchLogStore(),
    sources: ingest.sources,
    graph: ingest.graph,
    costs: new MemoryCostLedger(),
    diary: new MemoryDiary(),
    model,
    clock: fixedClock(),
    log: new RecordingLog(),
    settings: { temperature: 0.6, maxTokens: 1500, budgetTokens: 4000 },
    audit: new RecordingAudit(new WriteLog()),
  };
}

/** Every port of the ingest use case, in memory. */
export function ingestDeps() {
  return {
    turns: new MemoryTurnStore(),
    signalState: new MemorySignalStateStore(),
    jobs: new MemoryJobQueue(),
    idle: new MemoryIdleScheduler(),
    claims: new MemoryClaimChecks(),
    rejected: new MemoryRejectedLog(),
    sources: new MemorySourceReliabilityStore(),
    graph: new MemoryGraphStore(),
    settings: new MemorySettings(),
    items: new MemoryItems(),
    clock: fixedClock(),
    log: new RecordingLog(),
    config: defaultSignalConfig,
    redaction: { personalData: false },
    source: 'turn-queue',
    forgets: { latest: async () => null },
  };
}
