/**
 * What each function may do, in one table: the CDK app grants exactly this (no wildcard
 * grant helpers), the CDK tests assert the synthesized policies match it, and the
 * integration tests check that every AWS request a handler was seen making locally is
 * covered by it (the request ledger records operation and S3 key per function) — so a
 * grant the code needs cannot be missing, and one it does not need stands out here.
 *
 * Event source mappings add their own receive/delete grants; each role also gets writes to
 * its function's own log group (MemoryFunction) and X-Ray's tracing actions. KMS use of the
 * stage's data key is in the table too, event sources' included, each granted only through
 * the service that needs it (kms:ViaService): docs/encryption.md says what needs which.
 */
import type { QueueKey } from './resources.js';

export type FunctionKey = 'signal' | 'idle' | 'reflector' | 'sweep' | 'api';

export type DynamoAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'BatchGetItem' | 'BatchWriteItem';
export type S3Action = 'GetObject' | 'PutObject' | 'DeleteObject';
/** The services that use the stage's data key on a function's behalf. */
export type KmsService = 'dynamodb' | 's3' | 'sqs';
export type KmsAction = 'Decrypt' | 'DescribeKey' | 'GenerateDataKey';
export type KmsGrants = Readonly<Partial<Record<KmsService, readonly KmsAction[]>>>;

export interface Permissions {
  /** On the table and its indexes. */
  dynamodb: readonly DynamoAction[];
  /** Object key patterns (`*` = any characters) → what the function may do there. */
  s3: Readonly<Record<string, readonly S3Action[]>>;
  /** Queues it sends to (sqs:SendMessage). */
  sends: readonly QueueKey[];
  /** The queue its event source reads, if any (the event source grants receive, delete and visibility). */
  consumes: QueueKey | null;
  /** bedrock:InvokeModel on the stage's model (Converse). */
  model: boolean;
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
    // source reliability (TransactWriteItems of a marker Put and a counts Update)
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'BatchGetItem', 'BatchWriteItem'],
    s3: {
      'users/*/turns/*': ['PutObject'],
      'rejected/*': ['PutObject'],
      // claim checks: turns too large for SQS, uploaded by the publisher
      'claims/*': ['GetObject'],
    },
    sends: ['reflection', 'idle'],
    consumes: 'turn',
    model: false,
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['Decrypt', 'GenerateDataKey'], sqs: ['Decrypt', 'GenerateDataKey'] },
  },
  idle: {
    dynamodb: ['GetItem', 'PutItem'],
    s3: { 'rejected/*': ['PutObject'] },
    sends: ['reflection'],
    consumes: 'idle',
    model: false,
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['GenerateDataKey'], sqs: ['Decrypt', 'GenerateDataKey'] },
  },
  reflector: {
    // BatchWriteItem: the relation graph's edges, entities and hygiene log
    dynamodb: ['GetItem', 'PutItem', 'BatchGetItem', 'BatchWriteItem', 'Query', 'UpdateItem'],
    s3: {
      'users/*': ['GetObject'],
      'users/*/Knowledge_staging/*': ['PutObject', 'DeleteObject'],
      // DeleteObject: the nightly fact hygiene removes facts pruned past their recovery window
      'users/*/Knowledge/*': ['PutObject', 'DeleteObject'],
      'users/*/index/*': ['PutObject'],
      'users/*/reflections/*': ['PutObject'],
      'users/*/Logs/*': ['PutObject'],
      'users/*/episodes/*': ['PutObject'],
      'users/*/diary/*': ['PutObject'],
      'rejected/*': ['PutObject'],
    },
    sends: [],
    consumes: 'reflection',
    model: true,
    // sqs GenerateDataKey: parking a job in the DLQ after its last receive (see kmsImplied).
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['Decrypt', 'GenerateDataKey'], sqs: ['Decrypt', 'GenerateDataKey'] },
  },
  sweep: {
    dynamodb: ['Query', 'GetItem', 'DeleteItem'],
    s3: {
      'users/*/Knowledge_staging/*': ['DeleteObject'],
      'users/*/Logs/expiry/*': ['PutObject'],
    },
    sends: ['reflection'],
    consumes: null,
    model: false,
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['GenerateDataKey'], sqs: ['Decrypt', 'GenerateDataKey'] },
  },
  api: {
    // BatchWriteItem: edges users state, restores and splits in the relation graph
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'BatchGetItem', 'BatchWriteItem'],
    s3: {
      'users/*': ['GetObject'],
      'users/*/Knowledge/*': ['PutObject'],
      'users/*/Knowledge_staging/*': ['PutObject', 'DeleteObject'],
      'users/*/index/*': ['PutObject'],
      'users/*/reflections/*': ['PutObject'],
    },
    sends: [],
    consumes: null,
    model: false,
    kms: { dynamodb: ['Decrypt', 'DescribeKey'], s3: ['Decrypt', 'GenerateDataKey'] },
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

/** A key pattern as IAM matches it: `*` spans any characters, slashes included. */
export const keyMatches = (pattern: string, key: string): boolean =>
  new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(key);

/**
 * Whether `permissions` cover one request a handler made: `operation` as the request ledger
 * names it (`DynamoDB.Query`, `S3.PutObject`, …), with the S3 key or queue it addressed.
 */
export function covers(permissions: Permissions, operation: string, target: { key?: string; queue?: QueueKey } = {}): boolean {
  const [service, op] = operation.split('.') as [string, string];
  switch (service) {
    case 'DynamoDB':
      // IAM authorises a transaction by the actions of its items; ours put and update.
      if (op === 'TransactWriteItems') return permissions.dynamodb.includes('PutItem') && permissions.dynamodb.includes('UpdateItem');
      return (permissions.dynamodb as readonly string[]).includes(op);
    case 'S3': {
      // HeadObject is authorised by s3:GetObject.
      const action = op === 'HeadObject' ? 'GetObject' : op;
      const key = target.key;
      return key !== undefined && Object.entries(permissions.s3).some(([pattern, actions]) => (actions as readonly string[]).includes(action) && keyMatches(pattern, key));
    }
    case 'SQS':
      return (op === 'SendMessage' || op === 'SendMessageBatch') && target.queue !== undefined && permissions.sends.includes(target.queue);
    case 'BedrockRuntime':
      return permissions.model && (op === 'Converse' || op === 'InvokeModel');
    default:
      return false;
  }
}
