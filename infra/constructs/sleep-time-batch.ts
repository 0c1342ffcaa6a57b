/**
 * Sleep-time runs and routine reflections at batch prices (docs/design.md, "Batch inference"), on a
 * stage whose `sleepTimeInference.batch` or `routineInference.batch` is on: the service role Bedrock
 * assumes to run the sweep's batch inference jobs, the sweep's grants to start them on each job
 * model, the sweep's BATCH_INFERENCE and ROUTINE_BATCH_INFERENCE variables, the reflector's
 * ROUTINE_BATCH_INFERENCE switch, and the rule that brings each job's end back to the sweep function.
 *
 * AWS behaviour relied on:
 * - The service role: trusted by bedrock.amazonaws.com for this account's
 *   `model-invocation-job/*` (aws:SourceAccount, aws:SourceArn), reading the input and writing
 *   the output in S3 (s3:GetObject, s3:ListBucket, s3:PutObject), and invoking the model it is
 *   given, through its inference profile
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-iam-sr.html). The bucket is
 *   encrypted with the stage's key, so it also decrypts and generates data keys through S3.
 * - The caller: bedrock:CreateModelInvocationJob on the foundation model and on
 *   `model-invocation-job/*`, and iam:PassRole on the service role
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-permissions.html); the
 *   action applies to foundation models, custom models and jobs, not to inference profiles
 *   (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html),
 *   so a job run through a profile is granted on the model in every Region the profile routes to.
 * - Bedrock sends "Batch Inference Job State Change" events (source `aws.bedrock`) to the
 *   account's default event bus (https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring-eventbridge-how-it-works.html),
 *   best effort (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-bedrock.html):
 *   each scheduled sweep asks Bedrock (GetModelInvocationJob) about jobs whose end it has not
 *   processed, and completes the ended ones.
 *   The rule matches the stage's job names (their prefix) and the end states only.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
import {
  type BatchInferenceSettings,
  BatchInferenceSettingsSchema,
} from '../../lib/batch-inference/batch-inference.js';
import { jobFoundationModelArns, jobModelGrant, modelIdFor } from '../stacks/reflector-model.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import type { MemoryFunction } from './memory-function.js';

/** Where the jobs' files live in the bucket (lib/batch-inference/batch-inference.ts batchPrefix). */
const PREFIX = 'batch-inference/';

/** The stage's job name prefix: one stage's jobs and events apart from another's in the same account. */
export const batchJobPrefix = (stage: string): string => `memory-${stage}`;

/** What a stage sends to batch inference: sleep-time runs (on the sleep-time model), routine reflections (on the batches'). */
type BatchKind = 'sleepTimeInference' | 'routineInference';
const modelJobOf = (kind: BatchKind) => (kind === 'sleepTimeInference' ? ('sleepTime' as const) : undefined);

/** The kinds the stage has on. */
export const batchKindsOn = (config: StatelessStackProps['config']): BatchKind[] =>
  (['sleepTimeInference', 'routineInference'] as const).filter((k) => config[k].batch);

/** The sweep's settings, validated here so that a wrong stage setting fails the synth naming its field. */
function settingsOf(
  stack: Stack,
  props: StatelessStackProps,
  roleArn: string,
  kind: BatchKind,
): BatchInferenceSettings {
  const { minRecords, maxRecords } = props.config[kind];
  const settings = {
    jobPrefix: batchJobPrefix(props.stage),
    modelId: modelIdFor(stack, props.config, modelJobOf(kind)),
    roleArn,
    minRecords,
    maxRecords,
  };
  // Tokens (the role's ARN, a Region mapping's id) are checked as stand-ins: their values are CloudFormation's.
  const check = BatchInferenceSettingsSchema.safeParse({ ...settings, roleArn: 'arn:role', modelId: 'model' });
  if (!check.success) {
    const issue = check.error.issues[0];
    throw new Error(`${kind}.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return settings;
}

/** Each distinct model job of the kinds on (one grant per model: the sleep-time model may be the batches'). */
function modelJobsOf(props: StatelessStackProps): Array<'sleepTime' | undefined> {
  const jobs = batchKindsOn(props.config).map(modelJobOf);
  const seen = new Set<string>();
  return jobs.filter((job) => {
    const id = job ? (props.config.jobModels?.[job] ?? props.config.modelId) : props.config.modelId;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function serviceRole(stack: Stack, props: StatelessStackProps): Role {
  const { bucket, dataKey, config } = props;
  const jobs = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:model-invocation-job/*`;
  const role = new Role(stack, 'BatchInferenceRole', {
    description: "Assumed by Amazon Bedrock to run the sweep function's batch inference jobs",
    assumedBy: new ServicePrincipal('bedrock.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: { 'aws:SourceArn': jobs },
    }),
  });
  role.addToPolicy(
    new PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${PREFIX}*/input/*`)] }),
  );
  role.addToPolicy(
    new PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects(`${PREFIX}*/output/*`)] }),
  );
  role.addToPolicy(
    new PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': `${PREFIX}*` } },
    }),
  );
  role.addToPolicy(
    new PolicyStatement({
      actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
      resources: [dataKey.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
    }),
  );
  for (const job of modelJobsOf(props))
    for (const statement of jobModelGrant(stack, config, job)) role.addToPolicy(statement);
  NagSuppressions.addResourceSuppressions(
    role,
    [
      {
        id: 'AwsSolutions-IAM5',
        reason:
          "The jobs' input and output objects under batch-inference/<job>/ (named per sweep run), and each job model's foundation model in every Region only through its inference profile (infra/stacks/reflector-model.ts).",
      },
    ],
    true,
  );
  return role;
}

/**
 * The role, the sweep's grants and variables, the reflector's routine switch, and the rule onto
 * the sweep; `dlq` takes an event it could not deliver. Only for a stage with a kind on (batchKindsOn).
 */
export function sleepTimeBatchInference(
  stack: Stack,
  props: StatelessStackProps,
  fns: { sweep: MemoryFunction; reflector: MemoryFunction },
  dlq: Queue,
): void {
  const sweepFn = fns.sweep;
  const role = serviceRole(stack, props);
  const kinds = batchKindsOn(props.config);
  const settings = settingsOf(stack, props, role.roleArn, kinds[0] ?? 'sleepTimeInference');
  const jobs = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:model-invocation-job/*`;
  sweepFn.addToRolePolicy(
    new PolicyStatement({
      sid: 'CreateBatchInferenceJob',
      actions: ['bedrock:CreateModelInvocationJob'],
      resources: [jobs, ...modelJobsOf(props).flatMap((job) => jobFoundationModelArns(stack, props.config, job))],
    }),
  );
  // The state of a job whose end event never came (lib/batch-inference/sleep-time-batch.ts reconcileBatches).
  sweepFn.addToRolePolicy(
    new PolicyStatement({ sid: 'GetBatchInferenceJob', actions: ['bedrock:GetModelInvocationJob'], resources: [jobs] }),
  );
  sweepFn.addToRolePolicy(
    new PolicyStatement({
      sid: 'PassBatchInferenceRole',
      actions: ['iam:PassRole'],
      resources: [role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
    }),
  );
  if (props.config.sleepTimeInference.batch)
    sweepFn.addEnvironment(
      'BATCH_INFERENCE',
      stack.toJsonString(settingsOf(stack, props, role.roleArn, 'sleepTimeInference')),
    );
  if (props.config.routineInference.batch) {
    sweepFn.addEnvironment(
      'ROUTINE_BATCH_INFERENCE',
      stack.toJsonString(settingsOf(stack, props, role.roleArn, 'routineInference')),
    );
    fns.reflector.addEnvironment('ROUTINE_BATCH_INFERENCE', 'true');
  }
  new Rule(stack, 'BatchInferenceJobEnded', {
    description:
      'A batch inference job of this stage ended: its answers go to its runs and reflections (sweep function)',
    eventPattern: {
      source: ['aws.bedrock'],
      detailType: ['Batch Inference Job State Change'],
      detail: {
        batchJobName: [{ prefix: `${settings.jobPrefix}-` }],
        status: ['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'],
      },
    },
    targets: [new LambdaFunction(sweepFn, { retryAttempts: 2, maxEventAge: Duration.hours(1), deadLetterQueue: dlq })],
  });
  NagSuppressions.addResourceSuppressions(
    sweepFn.role!,
    [
      {
        id: 'AwsSolutions-IAM5',
        reason:
          "bedrock:CreateModelInvocationJob and GetModelInvocationJob on model-invocation-job/* (a job's id is Bedrock's, known only once created), and CreateModelInvocationJob on each job model's foundation model in every Region its inference profile routes to.",
      },
    ],
    true,
  );
}
