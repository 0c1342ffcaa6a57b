/** Create, on the emulators, the same table, queues (with DLQs) and bucket as the CDK app. */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { names, QUEUES, type QueueKey, TABLE } from '../resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './emulators.js';

export interface LocalQueue {
  name: string;
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

export interface LocalResources {
  tableName: string;
  bucketName: string;
  queues: Record<QueueKey, LocalQueue>;
}

export const LOCAL_ACCOUNT = '000000000000';

type Names = ReturnType<typeof names>;

export async function provision(
  stage: string,
  endpoints: {
    dynamodb: string;
    sqs: string;
    s3: string;
    credentials?: { accessKeyId: string; secretAccessKey: string };
  },
): Promise<LocalResources> {
  const common = { region: LOCAL_REGION, credentials: endpoints.credentials ?? LOCAL_CREDENTIALS };
  const ddb = new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb });
  const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
  const s3 = new S3Client({ ...common, endpoint: endpoints.s3, forcePathStyle: true });
  const n = names(stage);
  try {
    const tableName = await createTable(ddb, n.table);
    const bucketName = n.bucket(LOCAL_ACCOUNT, LOCAL_REGION);
    await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
    // Versioned, as the stateful stack's bucket: overwrites and deletes leave versions (versioned-s3.ts).
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: bucketName, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    const queues = {} as Record<QueueKey, LocalQueue>;
    for (const [key, def] of Object.entries(QUEUES) as Array<[QueueKey, QueueDef]>)
      queues[key] = await createQueue(sqs, n, def);
    return { tableName, bucketName, queues };
  } finally {
    ddb.destroy();
    sqs.destroy();
    s3.destroy();
  }
}

/** The table with its keys, global secondary index and time-to-live attribute, as in the stateful stack. */
async function createTable(ddb: DynamoDBClient, tableName: string): Promise<string> {
  await ddb.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE.sortKey, AttributeType: 'S' },
        { AttributeName: TABLE.gsi.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE.gsi.sortKey, AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: TABLE.gsi.name,
          KeySchema: [
            { AttributeName: TABLE.gsi.partitionKey, KeyType: 'HASH' },
            { AttributeName: TABLE.gsi.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  // No TTL locally. DynamoDB Local deletes expired items by the wall clock, while the harness runs
  // a simulated one: entries of a 2023 replay vanished at a moment set by the machine's speed, so
  // two replays of one input differed. Nothing relies on the deletion: AWS deletes expired items
  // "on a best-effort basis … typically within two days", and until then they "still show up in
  // reads, queries, and scans" (UpdateTimeToLive, DynamoDB API reference), so every read checks
  // expiry itself. The deployed table enables TTL (infra/stacks/stateful-stack.ts).
  return tableName;
}

type QueueDef = (typeof QUEUES)[QueueKey];

/** One queue and its dead-letter queue (kept 14 days), redriven after the definition's receive count. */
async function createQueue(sqs: SQSClient, n: Names, def: QueueDef): Promise<LocalQueue> {
  const fifo = def.fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {};
  const dlq = await sqs.send(
    new CreateQueueCommand({ QueueName: n.dlq(def), Attributes: { ...fifo, MessageRetentionPeriod: '1209600' } }),
  );
  const dlqArn = await queueArn(sqs, dlq.QueueUrl ?? '');
  const main = await sqs.send(
    new CreateQueueCommand({
      QueueName: n.queue(def),
      Attributes: {
        ...fifo,
        VisibilityTimeout: String(def.localVisibilityTimeoutSeconds),
        DelaySeconds: String('delaySeconds' in def ? def.delaySeconds : 0),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: def.maxReceiveCount }),
      },
    }),
  );
  return {
    name: n.queue(def),
    url: main.QueueUrl ?? '',
    arn: await queueArn(sqs, main.QueueUrl ?? ''),
    dlqUrl: dlq.QueueUrl ?? '',
    dlqArn,
  };
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const res = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = res.Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${url} has no ARN`);
  return arn;
}
