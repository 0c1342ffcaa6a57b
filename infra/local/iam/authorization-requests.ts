/**
 * What IAM evaluates for one SDK request: the actions, resources and request context AWS
 * authorizes it by. One request can need several actions:
 * - PutObject with `Tagging` also needs s3:PutObjectTagging
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/tagging-managing.html);
 * - a batch or a transaction is authorized per item by the item's own action: BatchWriteItem
 *   by dynamodb:BatchWriteItem, TransactWriteItems by dynamodb:PutItem / UpdateItem /
 *   DeleteItem / ConditionCheckItem on each item's table
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
 *   SQS's *Batch actions by the single action
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html);
 * - a request on a resource encrypted with a customer managed key makes the service call
 *   KMS with the caller's identity (kms:ViaService = the service): S3 GetObject → kms:Decrypt,
 *   PutObject → kms:GenerateDataKey
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html);
 *   SQS SendMessage → kms:GenerateDataKey and kms:Decrypt, ReceiveMessage → kms:Decrypt
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html);
 *   DynamoDB → kms:Decrypt and kms:DescribeKey
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/encryption.usagenotes.html).
 *   KMS is modelled on every such request, which is stricter than AWS (DynamoDB and S3
 *   bucket keys cache data keys), never laxer.
 * - Converse is authorized as bedrock:InvokeModel on the model or inference profile
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/security_iam_id-based-policy-examples.html),
 *   and through a profile on the foundation model where the call is routed (bedrockRequests);
 *   CreateModelInvocationJob as bedrock:CreateModelInvocationJob and iam:PassRole
 *   (batchInferenceRequests).
 */
import { COMMERCIAL_REGIONS, GEOGRAPHY_REGIONS, parseModelId } from '../../../lib/model/bedrock-models.js';
import type { LocalEnvironment } from './template-resolver.js';

export interface IamRequest {
  action: string;
  resource: string;
  context: Record<string, string>;
}

export interface RequestScope {
  env: LocalEnvironment;
  /** The customer managed key that encrypts a resource (table, bucket or queue ARN), if any. */
  keyOf(resourceArn: string): string | undefined;
}

type Input = Record<string, unknown>;

/** The IAM requests one SDK call is authorized by; throws for an operation not modelled here. */
export function authorizationRequests(
  service: string,
  operation: string,
  input: Input,
  scope: RequestScope,
): IamRequest[] {
  switch (service) {
    case 'DynamoDB':
      return dynamoRequests(operation, input, scope);
    case 'S3':
      return s3Requests(operation, input, scope);
    case 'SQS':
      return sqsRequests(operation, input, scope);
    case 'BedrockRuntime':
      return bedrockRequests(operation, input, scope);
    case 'Bedrock':
      return batchInferenceRequests(operation, input, scope);
    default:
      throw new Error(`the local IAM check does not model ${service}.${operation}`);
  }
}

function kms(scope: RequestScope, resourceArn: string, service: string, actions: readonly string[]): IamRequest[] {
  const key = scope.keyOf(resourceArn);
  // Only customer managed keys (an ARN) are ours to grant; AWS managed keys trust the account's callers.
  if (!key?.startsWith('arn:')) return [];
  const context = {
    'kms:ViaService': `${service}.${scope.env.region}.amazonaws.com`,
    'kms:CallerAccount': scope.env.account,
  };
  return actions.map((action) => ({ action, resource: key, context }));
}

function tableArn(scope: RequestScope, table: unknown): string {
  const { partition, region, account } = scope.env;
  return `arn:${partition}:dynamodb:${region}:${account}:table/${String(table)}`;
}

function dynamoRequests(operation: string, input: Input, scope: RequestScope): IamRequest[] {
  const onTable = (action: string, table: unknown, index?: unknown): IamRequest[] => {
    const arn = tableArn(scope, table);
    return [
      { action: `dynamodb:${action}`, resource: index ? `${arn}/index/${String(index)}` : arn, context: {} },
      ...kms(scope, arn, 'dynamodb', ['kms:Decrypt', 'kms:DescribeKey']),
    ];
  };
  switch (operation) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'DescribeTable':
      return onTable(operation, input.TableName);
    case 'Query':
    case 'Scan':
      return onTable(operation, input.TableName, input.IndexName);
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(input.RequestItems as Input).flatMap((table) => onTable(operation, table));
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      const actions: Record<string, string> = {
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
        Get: 'GetItem',
      };
      return (input.TransactItems as Input[]).flatMap((item) =>
        Object.entries(item).flatMap(([kind, body]) => onTable(actions[kind] ?? kind, (body as Input).TableName)),
      );
    }
    default:
      throw new Error(`the local IAM check does not model DynamoDB.${operation}`);
  }
}

function s3Requests(operation: string, input: Input, scope: RequestScope): IamRequest[] {
  const bucket = `arn:${scope.env.partition}:s3:::${String(input.Bucket)}`;
  const object = `${bucket}/${String(input.Key)}`;
  const versioned = input.VersionId !== undefined ? 'Version' : '';
  switch (operation) {
    case 'GetObject':
      return [
        { action: `s3:GetObject${versioned}`, resource: object, context: {} },
        ...kms(scope, bucket, 's3', ['kms:Decrypt']),
      ];
    case 'HeadObject':
      return [{ action: `s3:GetObject${versioned}`, resource: object, context: {} }];
    case 'PutObject':
      return [
        { action: 's3:PutObject', resource: object, context: {} },
        ...(input.Tagging !== undefined ? [{ action: 's3:PutObjectTagging', resource: object, context: {} }] : []),
        ...kms(scope, bucket, 's3', ['kms:GenerateDataKey']),
      ];
    case 'DeleteObject':
      return [{ action: `s3:DeleteObject${versioned}`, resource: object, context: {} }];
    case 'DeleteObjects':
      // s3:DeleteObject for every key, and s3:DeleteObjectVersion too for a key named with its
      // version id (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html, "Permissions").
      return ((input.Delete as { Objects?: Input[] } | undefined)?.Objects ?? []).flatMap((o) => [
        { action: 's3:DeleteObject', resource: `${bucket}/${String(o.Key)}`, context: {} },
        ...(o.VersionId !== undefined
          ? [{ action: 's3:DeleteObjectVersion', resource: `${bucket}/${String(o.Key)}`, context: {} }]
          : []),
      ]);
    case 'ListObjectsV2':
    case 'ListObjects':
      return [
        {
          action: 's3:ListBucket',
          resource: bucket,
          context: input.Prefix !== undefined ? { 's3:prefix': String(input.Prefix) } : {},
        },
      ];
    case 'ListObjectVersions':
      return [
        {
          action: 's3:ListBucketVersions',
          resource: bucket,
          context: input.Prefix !== undefined ? { 's3:prefix': String(input.Prefix) } : {},
        },
      ];
    default:
      throw new Error(`the local IAM check does not model S3.${operation}`);
  }
}

/** `https://host/{account}/{name}` → the queue's ARN. */
export function queueArnFromUrl(url: string, env: LocalEnvironment): string {
  const [account, name] = new URL(url).pathname.split('/').filter(Boolean).slice(-2);
  return `arn:${env.partition}:sqs:${env.region}:${account ?? env.account}:${name ?? ''}`;
}

function sqsRequests(operation: string, input: Input, scope: RequestScope): IamRequest[] {
  const queue = queueArnFromUrl(String(input.QueueUrl), scope.env);
  const on = (action: string, kmsActions: readonly string[] = []) => [
    { action: `sqs:${action}`, resource: queue, context: {} },
    ...kms(scope, queue, 'sqs', kmsActions),
  ];
  switch (operation) {
    case 'SendMessage':
    case 'SendMessageBatch':
      return on('SendMessage', ['kms:GenerateDataKey', 'kms:Decrypt']);
    case 'ReceiveMessage':
      return on('ReceiveMessage', ['kms:Decrypt']);
    case 'DeleteMessage':
    case 'DeleteMessageBatch':
      return on('DeleteMessage');
    case 'ChangeMessageVisibility':
    case 'ChangeMessageVisibilityBatch':
      return on('ChangeMessageVisibility');
    case 'GetQueueAttributes':
    case 'GetQueueUrl':
      return on(operation);
    default:
      throw new Error(`the local IAM check does not model SQS.${operation}`);
  }
}

function bedrockRequests(operation: string, input: Input, scope: RequestScope): IamRequest[] {
  if (operation !== 'Converse' && operation !== 'InvokeModel')
    throw new Error(`the local IAM check does not model BedrockRuntime.${operation}`);
  return modelRequests('bedrock:InvokeModel', input, scope);
}

/**
 * `action` on the model a request names. Through an inference profile: the profile, then the
 * foundation model in the Region Bedrock routes the call to, a request that carries the
 * profile's ARN as bedrock:InferenceProfileArn
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html;
 * https://docs.aws.amazon.com/bedrock/latest/userguide/geographic-cross-region-inference.html).
 * Which destination it picks is Bedrock's choice, call by call, so the foundation model is
 * checked in every destination the catalogue knows for the profile (and the source Region):
 * stricter than one call in AWS, never laxer. A global profile's destinations are every
 * commercial Region, and the Region-less foundation-model ARN
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html).
 */
function modelRequests(action: string, input: Input, scope: RequestScope): IamRequest[] {
  const { partition, region, account } = scope.env;
  const id = decodeURIComponent(String(input.modelId));
  if (id.startsWith('arn:')) return [{ action, resource: id, context: {} }];
  const { prefix, foundationModelId } = parseModelId(id);
  const model = `arn:${partition}:bedrock:${region}::foundation-model/${foundationModelId}`;
  if (prefix === null) return [{ action, resource: model, context: {} }];
  const profile = `arn:${partition}:bedrock:${region}:${account}:inference-profile/${id}`;
  const throughProfile = { 'bedrock:InferenceProfileArn': profile };
  const destinations = new Set([region, ...(prefix === 'global' ? COMMERCIAL_REGIONS : GEOGRAPHY_REGIONS[prefix])]);
  const models = [...destinations].map((r) => `arn:${partition}:bedrock:${r}::foundation-model/${foundationModelId}`);
  if (prefix === 'global') models.push(`arn:${partition}:bedrock:::foundation-model/${foundationModelId}`);
  return [
    { action, resource: profile, context: {} },
    ...models.map((resource) => ({ action, resource, context: throughProfile })),
  ];
}

/**
 * GetModelInvocationJob: bedrock:GetModelInvocationJob on the job. CreateModelInvocationJob
 * (Bedrock's control plane): bedrock:CreateModelInvocationJob on the
 * job and on the foundation model it runs, and iam:PassRole on the service role it names, passed
 * to Bedrock (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-permissions.html:
 * the example grants the action on the foundation model and on `model-invocation-job/*`; the
 * action's resource types are custom-model, foundation-model and model-invocation-job, no
 * inference profile: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html).
 * The job's own ARN is not known before it exists, so it is checked as
 * `model-invocation-job/<name>`, which a `model-invocation-job/*` grant covers as it covers every
 * job id. A model named through a profile is checked in the stack's Region.
 */
function batchInferenceRequests(operation: string, input: Input, scope: RequestScope): IamRequest[] {
  const { partition, region, account } = scope.env;
  // GetModelInvocationJob: on the job (its one resource type, the Service Authorization Reference).
  if (operation === 'GetModelInvocationJob') {
    const id = decodeURIComponent(String(input.jobIdentifier));
    const job = id.startsWith('arn:') ? id : `arn:${partition}:bedrock:${region}:${account}:model-invocation-job/${id}`;
    return [{ action: 'bedrock:GetModelInvocationJob', resource: job, context: {} }];
  }
  if (operation !== 'CreateModelInvocationJob')
    throw new Error(`the local IAM check does not model Bedrock.${operation}`);
  const action = 'bedrock:CreateModelInvocationJob';
  const id = decodeURIComponent(String(input.modelId));
  const model = id.startsWith('arn:')
    ? id
    : `arn:${partition}:bedrock:${region}::foundation-model/${parseModelId(id).foundationModelId}`;
  return [
    {
      action,
      resource: `arn:${partition}:bedrock:${region}:${account}:model-invocation-job/${String(input.jobName)}`,
      context: {},
    },
    { action, resource: model, context: {} },
    {
      action: 'iam:PassRole',
      resource: String(input.roleArn),
      context: { 'iam:PassedToService': 'bedrock.amazonaws.com' },
    },
  ];
}
