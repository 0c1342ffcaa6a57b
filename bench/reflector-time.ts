/**
 * Benchmark: the reflector's own (non-LLM) time per batch with 100, 1,000 and
 * 10,000 promoted Knowledge documents: snapshot parse, index build, BM25 search for
 * existing knowledge, assembly, caps, the five gates, recurrence check, staging and the
 * log — with in-memory stores and a model that answers at once, so neither network nor
 * model time is in the figure (storage round trips are measured by the cost benchmarks).
 */
import { performance } from 'node:perf_hooks';
import type { Job } from '../events/job.js';
import type { KnowledgeDoc } from '../lib/knowledge/knowledge.js';
import { ingestTurns } from '../lib/turns/ingest-turns.js';
import { runReflection } from '../lib/batches/run-reflection.js';
import { MemoryCostLedger } from '../lib/costs/cost-ledger.fake.js';
import { MemoryDiary } from '../lib/diary/diary.fake.js';
import { ingestDeps } from '../test/helpers/use-case-deps.js';
import { MemoryKnowledgeStore } from '../lib/knowledge/knowledge.fake.js';
import { MemoryBatchLogStore } from '../lib/batches/batch-log.fake.js';
import { turn } from '../lib/turns/turn.fake.js';
import { ScriptedModel } from '../lib/model/language-model.fake.js';
import { fixedClock, RecordingLog } from '../lib/kernel/runtime.fake.js';
import { RecordingAudit } from '../lib/items/memory-item.fake.js';
import { WriteLog } from '../lib/kernel/write-log.fake.js';

export interface ReflectorTimeRow {
  docs: number;
  batches: number;
  p50: number;
  p95: number;
  max: number;
}

const VOCAB = `reef tank coral clownfish lighting beagle walks hiking alps summer painting pottery kids school
  counseling support group conference guitar concert camping family husband wife sister brother job nurse teacher
  engineer startup marathon running yoga garden tomatoes recipe bread travel paris tokyo museum novel poetry piano
  violin chess soccer basketball volunteer shelter adoption transition identity pride parade workshop mentor career
  interview promotion moving apartment lease budget savings loan mortgage car bike commute weekend holiday birthday`
  .split(/\s+/)
  .filter(Boolean);

/** Deterministic pseudo-random docs (a linear congruential generator, seeded). */
function knowledgeDocs(n: number): KnowledgeDoc[] {
  let seed = 42;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const word = () => VOCAB[Math.floor(next() * VOCAB.length)] ?? 'memory';
  return Array.from({ length: n }, (_, i) => {
    const text = `The user ${Array.from({ length: 12 }, word).join(' ')}.`;
    return {
      id: `Facts/doc_${i}.md`,
      title: `${word()}_${word()}`,
      text,
      category: 'Facts',
      confidence: 0.75,
      sourceTurns: [1],
      summary: text,
      promotedAt: '2026-01-01T00:00:00Z',
    };
  });
}

/** A knowledge store whose Knowledge comes back through JSON, as the S3 snapshot does. */
class SnapshotKnowledgeStore extends MemoryKnowledgeStore {
  constructor(private readonly snapshot: string) {
    super();
  }
  override async loadKnowledge() {
    return (JSON.parse(this.snapshot) as { docs: KnowledgeDoc[] }).docs;
  }
}

export async function benchReflectorTime(sizes = [100, 1000, 10000], batches = 30): Promise<ReflectorTimeRow[]> {
  const ingest = ingestDeps();
  const queries = [
    'I adopted a beagle named Rex',
    'I keep a reef tank with clownfish',
    'I work as a nurse',
    'We went camping with the kids',
    'I love painting',
  ];
  await ingestTurns(
    Array.from({ length: 10 }, (_, i) => ({
      messageId: `m${i}`,
      body: JSON.stringify(
        turn({
          userId: 'bench',
          turnId: i + 1,
          query: `${queries[i % 5]} and more about it, turn ${i}`,
          response: 'That sounds great, tell me more.',
        }),
      ),
    })),
    ingest,
  );
  const job = ingest.jobs.jobs[0] as Job;
  const output = {
    new_facts: [
      { title: 'dog_rex', content: 'The user adopted a beagle named Rex.', source_turns: [1], category: 'Facts' },
      {
        title: 'reef_tank',
        content: 'The user keeps a reef tank with clownfish.',
        source_turns: [2],
        category: 'Facts',
      },
      { title: 'extra', content: 'The user works as a nurse.', source_turns: [3], category: 'Facts' },
    ],
    open_questions: [
      { question: 'What lighting suits the reef tank?', source_turns: [2], why_unresolved: 'no answer' },
    ],
  };
  const rows: ReflectorTimeRow[] = [];
  for (const n of sizes) {
    const snapshot = JSON.stringify({ version: 1, docs: knowledgeDocs(n) });
    const times: number[] = [];
    for (let i = 0; i < batches + 3; i++) {
      const state = ingestDeps().signalState;
      await state.save('bench', (await ingest.signalState.load('bench')).raw as never, null);
      const deps = {
        turns: ingest.turns,
        signalState: state,
        knowledge: new SnapshotKnowledgeStore(snapshot),
        batchLogs: new MemoryBatchLogStore(),
        sources: ingest.sources,
        graph: ingest.graph,
        costs: new MemoryCostLedger(),
        diary: new MemoryDiary(),
        model: new ScriptedModel(() => output),
        clock: fixedClock(),
        log: new RecordingLog(),
        settings: { temperature: 0.6, maxTokens: 1500, budgetTokens: 4000 },
        audit: new RecordingAudit(new WriteLog()),
      };
      const t0 = performance.now();
      const out = await runReflection(job, deps);
      const ms = performance.now() - t0;
      if (out.status !== 'completed') throw new Error(`batch ${out.status}`);
      if (i >= 3) times.push(ms); // the first runs warm the JIT
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
    rows.push({ docs: n, batches, p50: q(0.5), p95: q(0.95), max: times[times.length - 1] ?? 0 });
  }
  return rows;
}
