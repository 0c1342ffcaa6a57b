/**
 * Each local function's AWS clients: the production factories (lib/kernel/aws-clients.adapter.ts,
 * same settings, endpoints from the emulators through the SDK's standard variables) plus the
 * local harness's middlewares — IAM enforced from the synthesized stage (iam/iam-enforcement.ts),
 * the request ledger (request-ledger.ts), fault injection (fault-injection.ts) and the chain of
 * requests Lambda's recursive loop detection counts (recursive-loop.ts). The production
 * factory carries none of them. (The bucket's versions are kept by the S3 endpoint itself,
 * versioned-s3.ts, for every client alike.)
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  type AwsClients,
  createBedrockBatchClient,
  createBedrockClient,
  createDocumentClient,
  createDynamoDbClient,
  createS3Client,
  createSqsClient,
} from '../../lib/kernel/aws-clients.adapter.js';
import type { FunctionKey } from '../permissions.js';
import type { StandInHttpHandler } from './batch-inference-stand-in.js';
import { injectFaults } from './fault-injection.js';
import type { IamEnforcer } from './iam/iam-enforcement.js';
import { carryLineage } from './recursive-loop.js';
import { instrument } from './request-ledger.js';

type Client = { middlewareStack: { add: (...args: never[]) => void } };

/** Receipt handles whose visibility a function set itself (a job's retry brought forward), until the event source asks. */
const visibilitySet = new Set<string>();

/** Whether the function set this message's visibility itself (the event source then leaves it so); forgets it. */
export function functionSetVisibility(receiptHandle: string): boolean {
  return visibilitySet.delete(receiptHandle);
}

/** Notes the receipt handles of the visibility changes a function's SQS client made. */
function noteVisibilityChanges<C extends Client>(client: C): C {
  type Args = { input?: { ReceiptHandle?: string } };
  const add = client.middlewareStack.add as unknown as (mw: unknown, options: { step: string; name: string }) => void;
  add(
    (next: (args: Args) => Promise<unknown>, context: { commandName?: string }) => async (args: Args) => {
      const result = await next(args);
      const handle = args.input?.ReceiptHandle;
      if (context.commandName === 'ChangeMessageVisibilityCommand' && handle) visibilitySet.add(handle);
      return result;
    },
    { step: 'initialize', name: 'noteVisibilityChanges' },
  );
  return client;
}

/**
 * The clients `fn`'s handler gets: every request counted, faults injected when on, IAM enforced when `iam` is given.
 * Bedrock's control plane is answered by the batch inference stand-in when one is given
 * (batch-inference-stand-in.ts: no local endpoint serves it), else by the production client's endpoint.
 */
export function functionClients(
  fn: FunctionKey,
  iam: IamEnforcer | null,
  batchInference?: StandInHttpHandler,
): AwsClients {
  const wrap = <C extends Client>(client: C, service: string): C => {
    const counted = injectFaults(instrument(client, service, fn), service);
    return iam ? iam.enforce(counted, service, fn) : counted;
  };
  return {
    ddb: createDocumentClient(wrap(createDynamoDbClient(), 'DynamoDB')),
    s3: wrap(createS3Client(), 'S3'),
    sqs: carryLineage(noteVisibilityChanges(wrap(createSqsClient(), 'SQS'))),
    bedrock: wrap(createBedrockClient(), 'BedrockRuntime'),
    bedrockBatch: wrap(
      batchInference
        ? new BedrockClient({ requestHandler: batchInference as unknown as BedrockClient['config']['requestHandler'] })
        : createBedrockBatchClient(),
      'Bedrock',
    ),
  };
}

/** The client `fn`'s event source mapping polls and deletes with: Lambda uses the function's role for it. */
export function eventSourceClient(fn: FunctionKey, iam: IamEnforcer | null): SQSClient {
  const client = createSqsClient();
  return iam ? iam.enforce(client, 'SQS', fn, 'event-source') : client;
}
