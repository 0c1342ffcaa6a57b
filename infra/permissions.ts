/**
 * What each function may do, in one table: the CDK app grants exactly this (no wildcard
 * grant helpers), the CDK tests assert the synthesized policies match it, and the local
 * stack evaluates every AWS request a handler makes against the synthesized policies with
 * a real IAM engine (infra/local/iam/) and fails a denied one as AWS would — so a grant
 * the code needs cannot be missing, and one it does not need stands out here.
 *
 * Event source mappings add their own receive/delete grants; each role also gets writes to
 * its function's own log group (MemoryFunction) and X-Ray's tracing actions. KMS use of the
 * stage's data key is in the table too, event sources' included, each granted only through
 * the service that needs it (kms:ViaService): docs/encryption.md says what needs which.
 */
import type { QueueKey } from './resources.js';

export type FunctionKey = 'signal' | 'idle' | 'reflector' | 'sweep' | 'api';

export type DynamoAction =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'BatchGetItem'
  | 'BatchWriteItem';
export type S3Action = 'GetObject' | 'PutObject' | 'PutObjectTagging' | 'DeleteObject' | 'DeleteObjectVersion';
/** The services that use the stage's data key on a function's behalf. */
export type KmsService = 'dynamodb' | 's3' | 'sqs';
export type KmsAction = 'Decrypt' | 'DescribeKey' | 'GenerateDataKey';
export type KmsGrants = Readonly<Partial<Record<KmsService, readonly KmsAction[]>>>;

export interface Permissions {
  /** On the table and its indexes. */
  dynamodb: readonly DynamoAction[];
  /** Object key patterns (`*` = any characters) → what the function may do there. */
  s3: Readonly<Record<string, readonly S3Action[]>>;
  /**
   * s3:ListBucket on the bucket, unconditioned. S3 answers a GET/HEAD of a missing key with
   * 404 NoSuchKey only to a caller that may list the bucket, and with 403 AccessDenied to
   * any other (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
   * "Permissions"). Functions that read keys which may not exist (a knowledge index version
   * or segment another writer just retired, a Knowledge file a correction rewrites, a batch
   * log or model answer an item names; no job looks for a key on the chance
   * it exists) need it, so that "missing" and "not allowed" stay apart; the reflector's
   * forget lists the user's prefix too. AWS does not
   * document whether a grant limited by `s3:prefix` counts for that decision, so it is
   * not limited: it lets the function list key names only, and the two functions that
   * have it may read every object under `users/` already.
   */
  listBucket: boolean;
  /**
   * s3:ListBucketVersions on the bucket: ListObjectVersions needs it
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html). Only the
   * erasure of a forgotten user lists versions (every version under their prefixes, to delete).
   */
  listBucketVersions?: true;
  /** Queues it sends to (sqs:SendMessage). */
  sends: readonly QueueKey[];
  /** The queue its event source reads, if any (the event source grants receive, delete and visibility). */
  consumes: QueueKey | null;
  /** bedrock:InvokeModel on the stage's model (Converse). */
  model: boolean;
  /**
   * bedrock:InvokeModel on the stage's embedding model, granted only when the stage
   * embeds (infra/config/stages.ts `embeddings`): the reflector and the API compact, the API
   * embeds queries.
   */
  embeddings?: true;
  /**
   * Sleep-time runs and routine reflections at batch prices, on a stage that has them on
   * (infra/config/stages.ts `sleepTimeInference`, `routineInference`): bedrock:CreateModelInvocationJob
   * on their models and iam:PassRole on the job's service role (infra/constructs/sleep-time-batch.ts).
   */
  batchInference?: true;
  /**
   * KMS actions on the stage's data key (table, bucket, queues and DLQs), per service that
   * calls KMS on the function's behalf; each is granted only with kms:ViaService = that
   * service. Exactly what the entries above imply (`kmsImplied`, checked by the unit test).
   */
  kms: KmsGrants;
}

export const PERMISSIONS: Record<FunctionKey, Permissions> = {
  signal: {
    // signal state (GetItem, conditional PutItem), turn index (BatchWriteItem), duplicate check (BatchGetItem),
    // source reliability (TransactWriteItems of a marker Put and a counts Update), a closed session's
    // ephemeral entries (GetItem of its list and of each entry; TransactWriteItems of Puts: each cleared
    // entry, its audit entry and its search change mark)
    // Query: a user with no signal state is looked up in the forget receipts (their newest, lib/forget/dynamo-forget-log.adapter.ts)
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'BatchGetItem', 'BatchWriteItem', 'Query'],
    s3: {
      // PutObjectTagging: a PUT that sets tags (the `kind=turn` tag the archival rule filters on)
      // needs it besides PutObject (https://docs.aws.amazon.com/AmazonS3/latest/userguide/tagging-managing.html).
      'users/*/turns/*': ['PutObject', 'PutObjectTagging'],
      'rejected/*': ['PutObject'],
      // claim checks: turns too large for SQS, uploaded by the publisher
      'claims/*': ['GetObject'],
    },
    // No ListBucket: a claim check it may not read (missing, or a grant gone wrong) fails
    // the record, which is retried and parked in the DLQ with the error named.
    listBucket: false,
    sends: ['job', 'idle'],
    consumes: 'turn',
    model: false,
    kms: {
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt', 'GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    },
  },
  idle: {
    dynamodb: ['GetItem', 'PutItem'],
    s3: { 'rejected/*': ['PutObject'] },
    listBucket: false,
    // idle: a check the user outtalked puts itself back on its own queue (one pending check per user).
    sends: ['job', 'idle'],
    consumes: 'idle',
    model: false,
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['GenerateDataKey'], sqs: ['Decrypt', 'GenerateDataKey'] },
  },
  reflector: {
    // BatchWriteItem: the relation graph's edges, entities and hygiene log; a forget's deletes of the user's partition
    // UpdateItem: a search-index compaction gives the change marks it folded that have no TTL one (no mark is deleted)
    // DeleteItem: a forget deletes the user's signal state (the GLOBAL copies of their items go in a BatchWriteItem).
    dynamodb: ['GetItem', 'PutItem', 'BatchGetItem', 'BatchWriteItem', 'Query', 'UpdateItem', 'DeleteItem'],
    s3: {
      // DeleteObject and DeleteObjectVersion: a forget deletes every version of every object under the
      // user's prefix (DeleteObjects by version id needs both:
      // https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html, "Permissions")
      'users/*': ['GetObject', 'DeleteObject', 'DeleteObjectVersion'],
      // PutObject: a staged document's markdown, written when staged and on each reinforcement;
      // DeleteObject: removed when promoted or discarded (lib/knowledge/knowledge-store.adapter.ts). PutObject
      // and DeleteObject are the actions of those calls (https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html,
      // https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html, "Permissions").
      'users/*/Knowledge_staging/*': ['PutObject', 'DeleteObject'],
      // No diary/ or summaries/ grant: a diary entry and a summary pair are their DynamoDB records.
      // DeleteObject: the nightly fact hygiene removes facts pruned past their recovery window
      'users/*/Knowledge/*': ['PutObject', 'DeleteObject'],
      // DeleteObject: a knowledge index version is retired once the next one is current (lib/knowledge/knowledge-index.adapter.ts)
      'users/*/index/*': ['PutObject', 'DeleteObject'],
      'users/*/Logs/*': ['PutObject'],
      'users/*/episodes/*': ['PutObject'],
      'rejected/*': ['PutObject'],
      // a forget deletes the user's claim checks too (every version)
      'claims/*': ['DeleteObject', 'DeleteObjectVersion'],
      // A routine batch's request, kept for the nightly batch inference job (lib/batch-inference/routine-batch.ts),
      // read back and removed when a later batch asked on demand reflects it first; a forget deletes the user's (every version).
      'batch-inference/deferred/*': ['GetObject', 'PutObject', 'DeleteObject', 'DeleteObjectVersion'],
    },
    listBucket: true,
    listBucketVersions: true,
    // Its own queue: a forget with more to erase goes on in a fresh job (lib/forget/forget-user.ts).
    sends: ['job'],
    consumes: 'job',
    model: true,
    embeddings: true,
    // sqs GenerateDataKey: parking a job in the DLQ after its last receive (see kmsImplied).
    kms: {
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt', 'GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    },
  },
  sweep: {
    // BatchGetItem: the nightly and weekly selection reads the candidates' signal states (their per-day counts)
    // BatchWriteItem: an expired staged record is marked changed for the search index.
    // PutItem: an expired tier entry, its audit entry and its change mark, in one TransactWriteItems
    // (a transaction's Put is authorized as dynamodb:PutItem: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
    // the expiry sweep's log, an item; a batch inference job's answer recorded for its run (an item).
    dynamodb: ['Query', 'GetItem', 'BatchGetItem', 'PutItem', 'DeleteItem', 'BatchWriteItem'],
    s3: {
      // The expiry sweep deletes an expired staged document's markdown before its record (lib/knowledge/knowledge-store.adapter.ts;
      // https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html, "Permissions").
      'users/*/Knowledge_staging/*': ['DeleteObject'],
      // Sleep-time runs in collect mode (lib/batch-inference) read what the reflector's read: turns, Knowledge, recorded answers.
      'users/*': ['GetObject'],
      // A batch answer too large for its item is an object (lib/model/model-output-store.adapter.ts).
      'users/*/Logs/*': ['PutObject'],
      // The batch inference job's input and manifest, written; its output, read.
      'batch-inference/*': ['GetObject', 'PutObject'],
      // The routine reflections' kept requests, removed once collected (lib/batch-inference/routine-batch.ts).
      'batch-inference/deferred/*': ['DeleteObject'],
    },
    // A recorded answer or a Knowledge file may be missing (ListBucket keeps 404 apart from 403); the job's output is listed.
    listBucket: true,
    sends: ['job'],
    consumes: null,
    model: false,
    batchInference: true,
    kms: {
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt', 'GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    },
  },
  api: {
    // BatchWriteItem: edges users state, restores and splits in the relation graph; an item deleted or forgotten (req R-DEL)
    // DeleteItem: a deleted staged record (KnowledgeStore.deleteStaged sends DeleteItem,
    // https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteItem.html; actions as named in
    // https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html)
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'BatchGetItem', 'BatchWriteItem', 'DeleteItem'],
    s3: {
      // PutObject anywhere under a user's folder: an import restores every document of theirs
      // (lib/archive/archive-api.ts); PutObjectTagging: turn documents go back with their
      // `kind=turn` tag (a PUT that sets tags needs it: https://docs.aws.amazon.com/AmazonS3/latest/userguide/tagging-managing.html).
      // Before imports: Knowledge/, index/ and summaries/ only.
      // DeleteObject and DeleteObjectVersion (req R-DEL): a staged document's markdown when a reviewer promotes, discards
      // or deletes it (lib/knowledge/knowledge-store.adapter.ts); an item deleted or forgotten by provenance goes with
      // every version of its objects — turn and episode documents, Knowledge files — deleted by version id
      // with DeleteObjects, which needs both (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html, "Permissions").
      'users/*': ['GetObject', 'PutObject', 'PutObjectTagging', 'DeleteObject', 'DeleteObjectVersion'],
      // DeleteObject: a knowledge index version is retired once the next one is current (lib/knowledge/knowledge-index.adapter.ts)
      'users/*/index/*': ['DeleteObject'],
      // a forgotten turn's claim check, every version (as the user forget's)
      'claims/*': ['DeleteObject', 'DeleteObjectVersion'],
    },
    listBucket: true,
    // ListObjectVersions (the versions to delete) needs s3:ListBucketVersions:
    // https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html
    listBucketVersions: true,
    // job: a summary asked for on demand (POST …/summaries); turn: with `reflect`, the
    // agent.event that asks for a batch reflection too (sent with SendMessageBatch, which
    // sqs:SendMessage covers: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api-actions.html)
    sends: ['job', 'turn'],
    consumes: null,
    model: false,
    embeddings: true,
    kms: {
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt', 'GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    },
  },
};

/**
 * The KMS actions on the data key that a function's other grants need, per service:
 * - DynamoDB decrypts the table key with the caller's identity (and re-checks every few
 *   minutes, so revoking a grant takes effect): kms:Decrypt, plus kms:DescribeKey, which
 *   AWS's documented statement for principals using a table through a customer managed
 *   key includes (key metadata only).
 * - S3 (SSE-KMS, bucket key on): GetObject needs kms:Decrypt, PutObject kms:GenerateDataKey
 *   (single-part uploads only here; a multipart upload would need kms:Decrypt as well);
 *   DeleteObject needs none.
 * - SQS (SSE-KMS): a producer needs kms:GenerateDataKey and kms:Decrypt; a consumer needs
 *   kms:Decrypt, and here kms:GenerateDataKey too: SQS parks a message in the DLQ (same key)
 *   during a consumer's receive, and the grant keeps that move from failing on the key
 *   whichever identity SQS re-encrypts it with (not verified against a deployed stack).
 */
export function kmsImplied(permissions: Omit<Permissions, 'kms'>): KmsGrants {
  const kms: Partial<Record<KmsService, KmsAction[]>> = {};
  if (permissions.dynamodb.length > 0) kms.dynamodb = ['Decrypt', 'DescribeKey'];
  const s3 = new Set<KmsAction>();
  for (const actions of Object.values(permissions.s3)) {
    if (actions.includes('GetObject')) s3.add('Decrypt');
    if (actions.includes('PutObject')) s3.add('GenerateDataKey');
  }
  if (s3.size > 0) kms.s3 = [...s3].sort();
  if (permissions.sends.length > 0 || permissions.consumes !== null) kms.sqs = ['Decrypt', 'GenerateDataKey'];
  return kms;
}
