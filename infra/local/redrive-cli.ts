/**
 * npm run redrive [-- --dry-run] [--queue turn|job|idle] [--state FILE]
 * Lists what the running local harness's dead-letter queues hold, with each message's
 * reason where one was recorded, and (without --dry-run) sends it back to its source
 * queue, where the stack's functions run it again. Fix the cause first.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { parseArgs } from 'node:util';
import { QUEUES, type QueueKey } from '../resources.js';
import { redriveDeadLetters } from './redrive.js';
import { readStackInfo } from './stack-info.js';

const { values } = parseArgs({
  options: {
    'dry-run': { type: 'boolean', default: false },
    queue: { type: 'string', multiple: true },
    state: { type: 'string' },
  },
});
const queues = (values.queue ?? Object.keys(QUEUES)) as QueueKey[];
for (const q of queues) {
  if (!(q in QUEUES)) {
    console.error(`--queue must be one of ${Object.keys(QUEUES).join(', ')}, not ${q}`);
    process.exit(2);
  }
}
const info = readStackInfo(values.state);
const common = { region: info.region, credentials: info.credentials };
const sqs = new SQSClient({ ...common, endpoint: info.endpoints.sqs });
const s3 = new S3Client({ ...common, endpoint: info.endpoints.s3, forcePathStyle: true });
const parked = await redriveDeadLetters({ sqs, s3 }, info, { dryRun: values['dry-run'], queues });
for (const p of parked) {
  console.log(
    `${p.redriven ? 'redriven' : 'parked  '} ${p.queue} ${p.messageId} (${p.receiveCount} receives) ${p.what}${p.reason ? ` — ${p.reason}` : ' — reason: see the function logs for this message id'}`,
  );
}
console.log(
  `${parked.length} message(s) ${values['dry-run'] ? 'in dead-letter queues (dry run: nothing moved)' : 'sent back to their queues'}`,
);
console.log(JSON.stringify({ parked: parked.length, redriven: parked.filter((p) => p.redriven).length }));
process.exit(0);
