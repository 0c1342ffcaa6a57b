/**
 * npm run bench — runs the benchmarks and writes BENCHMARKS.md. Speed and cost goals are
 * checked here, not by timed assertions in tests.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchSignalWrites } from './signal-writes.js';

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

async function main(): Promise<void> {
  const rows = await benchSignalWrites();
  const goal = 1.2;
  const worst = Math.max(...rows.map((r) => r.ddbWriteRequests));
  const table = [
    '| scenario | turns | DynamoDB write requests / turn | write units / turn | DynamoDB reads / turn | S3 PUTs / turn | SQS sends / turn |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.scenario} | ${r.turns} | ${fmt(r.ddbWriteRequests)} | ${fmt(r.ddbWriteUnits)} | ${fmt(r.ddbReadRequests)} | ${fmt(r.s3Puts)} | ${fmt(r.sqsSends)} |`),
  ].join('\n');
  const md = `# Benchmarks

Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (${os.cpus().length} cores, Node ${process.version}), against the local emulators.

## Signal ingestion: AWS requests per turn

The signal function invoked with full 10-record SQS batches (as Lambda's FIFO event source
delivers them). Requests are counted by an SDK middleware on the handler's own clients
(\`lib/adapters/request-ledger.ts\`); write units are DynamoDB Local's ConsumedCapacity.
Per user and batch: one BatchWriteItem for the turn index, one conditional PutItem for the
signal state (which is also the activity index). Goal: ≤ ${goal} DynamoDB write requests per turn.

${table}

Worst case: ${fmt(worst)} write requests per turn — ${worst <= goal ? 'within' : 'over'} the goal of ${goal}.
Write units count the index entries one by one (a BatchWriteItem is one request but one
unit per item), so units per turn stay near 1 + 1/(turns per user in the batch).
`;
  writeFileSync(new URL('../BENCHMARKS.md', import.meta.url), md);
  console.log(table);
  console.log(`\nworst case ${fmt(worst)} DynamoDB write requests per turn (goal ≤ ${goal}); wrote BENCHMARKS.md`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
