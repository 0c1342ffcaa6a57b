/**
 * npm run rejected [-- --day YYYY-MM-DD] [--json]
 * Lists the rejected-events log of the running local harness (.local/stack.json): which
 * record, from which queue, and every failing field. Against a deployed stage, the same
 * records are under s3://<bucket>/rejected/{day}/{source}/{messageId}.json.
 */
import { parseArgs } from 'node:util';
import { S3Client } from '@aws-sdk/client-s3';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { readStackInfo } from './stack-info.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { values } = parseArgs({ options: { day: { type: 'string' }, json: { type: 'boolean', default: false } } });
const info = readStackInfo();
const s3 = new S3Client({
  region: info.region,
  endpoint: info.endpoints.s3,
  forcePathStyle: true,
  credentials: info.credentials,
});
const events = await new S3RejectedEventLog({ s3, bucketName: info.bucketName }).list(values.day);
if (values.json) console.log(JSON.stringify(events, null, 2));
else {
  for (const e of events) {
    console.log(`${e.receivedAt}  ${e.source}  ${e.messageId}`);
    for (const err of e.errors) console.log(`    ${err.path}: ${err.message}`);
    console.log(`    body: ${e.body.length > 120 ? `${e.body.slice(0, 120)}…` : e.body}`);
  }
  console.log(`${events.length} rejected record(s)`);
}
s3.destroy();
