/**
 * Forgetting a heavy user ("done within minutes for a user with 100k items"):
 * a user's partition is filled with `--items` turn-index-like items (≈ 1 KB each) and their
 * folder with `--objects` documents, directly (a replay of 100k turns would take hours here),
 * then `DELETE /v1/users/{u}` runs the real API and reflector handlers on the local harness
 * until the receipt says done. Timed: the whole erasure, and the deliveries it took.
 *
 *   tsx bench/forget.ts [--items 100000] [--objects 2000]
 *
 * DynamoDB Local is not DynamoDB: AWS serves at most 1,000 write units a second per partition
 * key, so there the item deletes alone take at least items ÷ 1,000 seconds (reported beside the
 * measured time). Its last stdout line is the result as JSON.
 */
import { parseArgs } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { MemoryClient } from '../functions/api/client.js';
import { startHarness } from '../infra/local/harness.js';
import { createDocumentClient, createDynamoDbClient } from '../lib/kernel/aws-clients.adapter.js';
import { batchWriteAll } from '../lib/kernel/dynamo-query.adapter.js';
import { keys, turnDocKey } from '../lib/kernel/memory-paths.js';
import { printReport } from './print-report.js';

export interface ForgetReport {
  items: number;
  objects: number;
  /** Wall time from the request to the receipt marked done. */
  seconds: number;
  receipt: { items: number; objects: number };
  /** The partition-throughput floor in AWS for the item deletes alone (1,000 write units a second per key). */
  awsFloorSeconds: number;
  left: { items: number; objects: number };
}

const USER = 'heavy-user';

async function seed(stack: Awaited<ReturnType<typeof startHarness>>, items: number, objects: number): Promise<void> {
  const ddb = createDocumentClient(createDynamoDbClient());
  const filler = 'x'.repeat(900);
  const rows = Array.from({ length: items }, (_, i) => ({
    PutRequest: { Item: { pk: keys.userPk(USER), sk: keys.turnSk(i + 1), turnId: i + 1, text: filler } },
  }));
  for (let i = 0; i < rows.length; i += 2_500)
    await Promise.all(
      Array.from({ length: 4 }, (_, k) =>
        batchWriteAll(ddb, stack.info.tableName, rows.slice(i + k * 625, i + (k + 1) * 625)),
      ),
    );
  const s3 = new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  });
  for (let i = 0; i < objects; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, objects - i) }, (_, k) =>
        s3.send(
          new PutObjectCommand({
            Bucket: stack.info.bucketName,
            Key: turnDocKey(USER, i + k + 1, 'doc'),
            Body: filler,
          }),
        ),
      ),
    );
  }
  s3.destroy();
}

export async function benchForget(items: number, objects: number): Promise<ForgetReport> {
  const stack = await startHarness({ stage: 'forgetbench', logLevel: 'SILENT', speed: 300 });
  try {
    await seed(stack, items, objects);
    const admin = new MemoryClient(stack.info.apiUrl, () => stack.info.adminToken);
    const started = performance.now();
    await admin.forget(USER);
    await stack.waitUntilDrained({ timeoutMs: 60 * 60_000 });
    const seconds = (performance.now() - started) / 1000;
    const { receipt } = await admin.forgetReceipt(USER);
    if (receipt.status !== 'done') throw new Error(`the forget of ${USER} did not finish: ${JSON.stringify(receipt)}`);
    const left = (await stack.dumpState()).find((d) => d.userId === USER);
    return {
      items,
      objects,
      seconds: Number(seconds.toFixed(1)),
      receipt: { items: receipt.counts.items, objects: receipt.counts.objects },
      awsFloorSeconds: Math.ceil(items / 1_000),
      left: { items: Object.keys(left?.items ?? {}).length, objects: Object.keys(left?.objects ?? {}).length },
    };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { items: { type: 'string', default: '100000' }, objects: { type: 'string', default: '2000' } },
    strict: true,
  });
  printReport(benchForget(Number(values.items), Number(values.objects)));
}
