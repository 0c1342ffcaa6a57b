/**
 * npm run bench — runs the benchmarks and writes BENCHMARKS.md. Speed and cost goals are
 * checked here, not by timed assertions in tests.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchReflectorTime } from './reflector-time.js';
import { benchSignalWrites } from './signal-writes.js';

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

async function main(): Promise<void> {
  const writes = await benchSignalWrites();
  const writeGoal = 1.2;
  const worstWrites = Math.max(...writes.map((r) => r.ddbWriteRequests));
  const writesTable = [
    '| scenario | turns | DynamoDB write requests / turn | write units / turn | DynamoDB reads / turn | S3 PUTs / turn | SQS sends / turn |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...writes.map((r) => `| ${r.scenario} | ${r.turns} | ${fmt(r.ddbWriteRequests)} | ${fmt(r.ddbWriteUnits)} | ${fmt(r.ddbReadRequests)} | ${fmt(r.s3Puts)} | ${fmt(r.sqsSends)} |`),
  ].join('\n');

  const times = await benchReflectorTime();
  const timeGoal = 100;
  const at1000 = times.find((r) => r.docs === 1000);
  const timesTable = [
    '| Knowledge documents | batches | p50 ms | p95 ms | max ms |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...times.map((r) => `| ${r.docs} | ${r.batches} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} |`),
  ].join('\n');

  const md = `# Benchmarks

Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (${os.cpus().length} cores, Node ${process.version}), against the local emulators.

## Signal ingestion: AWS requests per turn

The signal function invoked with full 10-record SQS batches (as Lambda's FIFO event source
delivers them). Requests are counted by an SDK middleware on the handler's own clients
(\`lib/adapters/request-ledger.ts\`); write units are DynamoDB Local's ConsumedCapacity.
Per SQS batch: one BatchWriteItem for the turn index (all users together), and per user one
conditional PutItem for the signal state (which is also the activity index).
Goal: ≤ ${writeGoal} DynamoDB write requests per turn.

${writesTable}

Worst case: ${fmt(worstWrites)} write requests per turn — ${worstWrites <= writeGoal ? 'within' : 'over'} the goal of ${writeGoal}.
Write units count index entries one by one (a BatchWriteItem is one request but one unit
per item) plus the state item and its activity-index copy in the GSI.

## Reflector: non-LLM time per batch

\`runReflection\` on a 10-turn batch with in-memory stores and a model that answers at once,
so the figure is the reflector's own work: parsing the Knowledge snapshot, building the
search index, the BM25 search for existing knowledge, assembly, caps, the five gates, the
recurrence check, staging and the log. Storage round trips are not included.
Goal: ≤ ${timeGoal} ms p95 at 1,000 documents.

${timesTable}

At 1,000 documents: p95 ${at1000 ? at1000.p95.toFixed(1) : '?'} ms — ${at1000 && at1000.p95 <= timeGoal ? 'within' : 'over'} the goal.
`;
  writeFileSync(new URL('../BENCHMARKS.md', import.meta.url), md);
  console.log(writesTable);
  console.log(`\nworst case ${fmt(worstWrites)} DynamoDB write requests per turn (goal ≤ ${writeGoal})\n`);
  console.log(timesTable);
  console.log(`\nreflector non-LLM p95 at 1,000 docs: ${at1000?.p95.toFixed(1)} ms (goal ≤ ${timeGoal}); wrote BENCHMARKS.md`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
