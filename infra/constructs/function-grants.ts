/** A memory function's grants and event source: exactly what infra/permissions.ts lists for it. */
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource, type SqsEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { type NagPackSuppression, NagSuppressions, type RegexAppliesTo } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { Permissions } from '../permissions.js';
import { QUEUES } from '../resources.js';
import { modelGrant, modelGrantWildcards } from '../stacks/reflector-model.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import type { MemoryFunction } from './memory-function.js';

/**
 * A cdk-nag `appliesTo` for the IAM5 finding on the wildcard resource `<ARN of resource>/<tail>`.
 * The resource lives in the stateful stack, so cdk-nag renders its ARN either as a GetAtt
 * (`<MemoryBucket1234ABCD.Arn>`) or as the name of the stateful stack's export; both name the
 * resource's logical id in one path segment, and the tail must match exactly.
 */
const wildcardUnder = (resource: Construct, tail: string): RegexAppliesTo => {
  const logicalId = Stack.of(resource).getLogicalId(resource.node.defaultChild as CfnElement);
  const literal = tail.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return { regex: `/^Resource::[^/]*${logicalId}[^/]*\\/${literal}$/` };
};

/**
 * bedrock:InvokeModel on the embedding model's foundation-model ARN in the stack's Region (no
 * wildcard): the resource an on-demand InvokeModel of a bare model id is authorised on
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html).
 */
function embeddingGrant(stack: Stack, modelId: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'InvokeEmbeddingModel',
    actions: ['bedrock:InvokeModel'],
    resources: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`],
  });
}

/**
 * The event source on the queue infra/permissions.ts says the function consumes. It is
 * built on a view of the queue that leaves its key out, so the event source grants only
 * the SQS actions (receive, delete, visibility): CDK would otherwise add kms:Decrypt on
 * the key with no condition, and the function's KMS grants come from the table instead.
 */
export function functionEventSource(
  stack: Stack,
  permissions: Permissions,
  props: StatelessStackProps,
  options: SqsEventSourceProps,
): SqsEventSource {
  const key = permissions.consumes;
  if (key === null) throw new Error('this function consumes no queue (infra/permissions.ts)');
  const { queue } = props.queues[key];
  const view = Queue.fromQueueAttributes(stack, `${QUEUES[key].id}Source`, {
    queueArn: queue.queueArn,
    queueUrl: queue.queueUrl,
    fifo: QUEUES[key].fifo,
  });
  return new SqsEventSource(view, options);
}

/**
 * Grants exactly what infra/permissions.ts lists for the function: DynamoDB actions on the
 * table and its indexes, S3 actions on the listed key patterns, SendMessage on the listed
 * queues, InvokeModel on the stage's model (its Region's inference profile and the foundation
 * models that profile routes to, no wildcard), and KMS actions on the data key, each only
 * through the service that uses it. No grant helper with wider actions is used.
 */
export function grantPermissions(
  stack: Stack,
  fn: MemoryFunction,
  permissions: Permissions,
  props: StatelessStackProps,
): void {
  const { table, bucket, queues, config, dataKey } = props;
  if (permissions.dynamodb.length > 0) table.grant(fn, ...permissions.dynamodb.map((a) => `dynamodb:${a}`));
  for (const [pattern, actions] of Object.entries(permissions.s3)) {
    fn.addToRolePolicy(
      new PolicyStatement({ actions: actions.map((a) => `s3:${a}`), resources: [bucket.arnForObjects(pattern)] }),
    );
  }
  if (permissions.listBucket)
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  if (permissions.listBucketVersions)
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucketVersions'], resources: [bucket.bucketArn] }));
  if (permissions.sends.length > 0) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: permissions.sends.map((q) => queues[q].queue.queueArn),
      }),
    );
  }
  for (const [service, actions] of Object.entries(permissions.kms)) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: actions.map((a) => `kms:${a}`),
        resources: [dataKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `${service}.${stack.region}.amazonaws.com` } },
      }),
    );
  }
  // InvokeModel on the stage's model: its inference profile in this Region and the foundation
  // model in every Region, only through the profile (infra/stacks/reflector-model.ts).
  if (permissions.model) for (const statement of modelGrant(stack, config)) fn.addToRolePolicy(statement);
  // InvokeModel on the embedding model, in this Region, only on a stage that embeds.
  if (permissions.embeddings && config.embeddings) fn.addToRolePolicy(embeddingGrant(stack, config.embeddings.modelId));

  // cdk-nag AwsSolutions-IAM5 flags every wildcard resource; these are the intended ones,
  // each named exactly (appliesTo), so any other wildcard on the role is still reported.
  const wildcards: NagPackSuppression[] = [];
  if (permissions.dynamodb.length > 0) {
    wildcards.push({
      id: 'AwsSolutions-IAM5',
      reason:
        "The table grant also covers the table's global secondary indexes (index/*, today only gsi1), which Query needs; the actions are exactly the DynamoDB actions infra/permissions.ts lists for this function.",
      appliesTo: [wildcardUnder(table, 'index/*')],
    });
  }
  const patterns = Object.keys(permissions.s3);
  if (patterns.length > 0) {
    wildcards.push({
      id: 'AwsSolutions-IAM5',
      reason: `S3 grants are per key prefix, exactly as infra/permissions.ts lists them for this function (${patterns.join(', ')}): the wildcards stand for user ids and object names, known only per request, and test/infra/stacks.test.ts checks that the synthesized grants equal that table.`,
      appliesTo: patterns.map((pattern) => wildcardUnder(bucket, pattern)),
    });
  }
  const modelWildcards = permissions.model ? modelGrantWildcards(config) : null;
  if (modelWildcards) wildcards.push(modelWildcards);
  if (wildcards.length > 0) NagSuppressions.addResourceSuppressions(fn.role!, wildcards, true);
}
