/**
 * What each function may do, in one table: the CDK app grants exactly this (no wildcard
 * grant helpers), the CDK tests assert the synthesized policies match it, and the
 * integration tests check that every AWS request a handler was seen making locally is
 * covered by it (the request ledger records operation and S3 key per function) — so a
 * grant the code needs cannot be missing, and one it does not need stands out here.
 *
 * Event source mappings add their own receive/delete grants; each role also gets writes to
 * its function's own log group (MemoryFunction) and X-Ray's tracing actions.
 */
import type { QueueKey } from './resources.js';

export type FunctionKey = 'signal' | 'idle' | 'reflector' | 'sweep' | 'api';

export type DynamoAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'BatchGetItem' | 'BatchWriteItem';
export type S3Action = 'GetObject' | 'PutObject' | 'DeleteObject';

export interface Permissions {
  /** On the table and its indexes. */
  dynamodb: readonly DynamoAction[];
  /** Object key patterns (`*` = any characters) → what the function may do there. */
  s3: Readonly<Record<string, readonly S3Action[]>>;
  /** Queues it sends to (sqs:SendMessage). */
  sends: readonly QueueKey[];
  /** bedrock:InvokeModel on the stage's model (Converse). */
  model: boolean;
}

export const PERMISSIONS: Record<FunctionKey, Permissions> = {
  signal: {
    // signal state (GetItem, conditional PutItem), turn index (BatchWriteItem), duplicate check (BatchGetItem)
    dynamodb: ['GetItem', 'PutItem', 'BatchGetItem', 'BatchWriteItem'],
    s3: {
      'users/*/turns/*': ['PutObject'],
      'rejected/*': ['PutObject'],
      // claim checks: turns too large for SQS, uploaded by the publisher
      'claims/*': ['GetObject'],
    },
    sends: ['reflection', 'idle'],
    model: false,
  },
  idle: {
    dynamodb: ['GetItem', 'PutItem'],
    s3: { 'rejected/*': ['PutObject'] },
    sends: ['reflection'],
    model: false,
  },
  reflector: {
    dynamodb: ['GetItem', 'PutItem', 'BatchGetItem', 'Query', 'UpdateItem'],
    s3: {
      'users/*': ['GetObject'],
      'users/*/Knowledge_staging/*': ['PutObject', 'DeleteObject'],
      'users/*/Knowledge/*': ['PutObject'],
      'users/*/index/*': ['PutObject'],
      'users/*/reflections/*': ['PutObject'],
      'users/*/Logs/*': ['PutObject'],
      'rejected/*': ['PutObject'],
    },
    sends: [],
    model: true,
  },
  sweep: {
    dynamodb: ['Query', 'GetItem', 'DeleteItem'],
    s3: {
      'users/*/Knowledge_staging/*': ['DeleteObject'],
      'users/*/Logs/expiry/*': ['PutObject'],
    },
    sends: ['reflection'],
    model: false,
  },
  api: {
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'BatchGetItem'],
    s3: {
      'users/*': ['GetObject'],
      'users/*/Knowledge/*': ['PutObject'],
      'users/*/Knowledge_staging/*': ['PutObject', 'DeleteObject'],
      'users/*/index/*': ['PutObject'],
      'users/*/reflections/*': ['PutObject'],
    },
    sends: [],
    model: false,
  },
};

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
