/**
 * A smoke target on a deployed stage, read from what the stacks publish — nothing here
 * changes the stacks:
 * - the two stacks' outputs (CloudFormation DescribeStacks, IAM cloudformation:DescribeStacks:
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStacks.html):
 *   TurnQueueUrl, MemoryBucketName, UserPoolId and UserPoolClientId (stateful), ApiUrl
 *   (stateless);
 * - the other queues and the dead-letter queues by their names (infra/resources.ts `names`)
 *   with SQS GetQueueUrl (IAM sqs:GetQueueUrl:
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueUrl.html);
 * - the functions' log groups from the stateless stack's resources (ListStackResources, IAM
 *   cloudformation:ListStackResources:
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_ListStackResources.html),
 *   only to say where to look; without the permission the report names the stack instead.
 * - the stage's models from infra/config/stages.ts, for the pre-flight (preflight.ts: Bedrock
 *   Converse/InvokeModel and GetFoundationModel with the caller's credentials).
 * Region and credentials come from the SDK's usual chain (AWS_REGION / AWS_PROFILE / config).
 */
import {
  CloudFormationClient,
  DescribeStacksCommand,
  type DescribeStacksCommandOutput,
  paginateListStackResources,
} from '@aws-sdk/client-cloudformation';
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { S3Client } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { invocationFor } from '../../lib/model/bedrock-models.js';
import { stageConfig } from '../config/stages.js';
import { names, QUEUES, type QueueKey } from '../resources.js';
import { cognitoAuth, givenTokenAuth } from './cognito-auth.js';
import { stageModels } from './preflight.js';
import type { ModelAccess, SmokeAuth, SmokeFunction, SmokeQueue, SmokeTarget } from './target.js';

export interface CloudTargetOptions {
  stage: string;
  /** Default: the SDK's region resolution. */
  region?: string;
  /** A bearer token for a stage that trusts its own OIDC issuer (`--token` / SMOKE_TOKEN). */
  token?: string;
  /** With `token`: the user to publish for, when the token may act on several. */
  userId?: string;
}

export const stackNames = (stage: string) => ({
  stateful: `reflective-memory-${stage}-stateful`,
  stateless: `reflective-memory-${stage}-stateless`,
});

/** Construct ids of the functions' log groups in the stateless stack (infra/constructs/memory-function.ts: `${id}Logs`). */
const LOG_GROUP_IDS: Record<SmokeFunction, string> = {
  signal: 'SignalFunctionLogs',
  reflector: 'ReflectorFunctionLogs',
  idle: 'IdleFunctionLogs',
  api: 'ApiFunctionLogs',
};

export async function stackOutputs(cfn: CloudFormationClient, stackName: string): Promise<Record<string, string>> {
  let res: DescribeStacksCommandOutput;
  try {
    res = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
  } catch (error) {
    // DescribeStacks answers ValidationError for a stack that does not exist.
    if ((error as Error).name === 'ValidationError')
      throw new Error(
        `stack ${stackName} not found in this account and region: deploy the stage first (npx cdk deploy --all -c stage=…) or set AWS_REGION`,
      );
    throw error;
  }
  const stack = res.Stacks?.[0];
  return Object.fromEntries(
    (stack?.Outputs ?? []).flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
  );
}

/** Each function's log group, by its logical id's prefix (CDK appends a hash). */
export async function functionLogGroups(
  cfn: CloudFormationClient,
  stackName: string,
): Promise<Record<SmokeFunction, string>> {
  const found: Partial<Record<SmokeFunction, string>> = {};
  try {
    for await (const page of paginateListStackResources({ client: cfn }, { StackName: stackName })) {
      for (const r of page.StackResourceSummaries ?? []) {
        if (r.ResourceType !== 'AWS::Logs::LogGroup' || !r.PhysicalResourceId) continue;
        for (const [fn, id] of Object.entries(LOG_GROUP_IDS) as Array<[SmokeFunction, string]>) {
          if (r.LogicalResourceId?.startsWith(id)) found[fn] = r.PhysicalResourceId;
        }
      }
    }
  } catch {
    // Only for the report's hints: name the stack instead.
  }
  const or = (fn: SmokeFunction) => found[fn] ?? `the ${fn} function's log group in stack ${stackName}`;
  return { signal: or('signal'), reflector: or('reflector'), idle: or('idle'), api: or('api') };
}

async function queueUrls(sqs: SQSClient, stage: string, turnQueueUrl: string): Promise<Record<QueueKey, SmokeQueue>> {
  const n = names(stage);
  const url = async (name: string) => {
    try {
      return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? '';
    } catch (error) {
      throw new Error(
        `queue ${name}: ${(error as Error).name}: ${(error as Error).message} (the stage's queues are named by infra/resources.ts; the caller needs sqs:GetQueueUrl)`,
      );
    }
  };
  const entries = await Promise.all(
    (Object.keys(QUEUES) as QueueKey[]).map(async (key): Promise<[QueueKey, SmokeQueue]> => {
      const def = QUEUES[key];
      const main = key === 'turn' ? turnQueueUrl : await url(n.queue(def));
      return [key, { name: n.queue(def), url: main, dlqName: n.dlq(def), dlqUrl: await url(n.dlq(def)) }];
    }),
  );
  return Object.fromEntries(entries) as Record<QueueKey, SmokeQueue>;
}

function authFor(outputs: Record<string, string>, options: CloudTargetOptions, region: string | undefined): SmokeAuth {
  if (options.token) return givenTokenAuth(options.token, options.userId);
  const { UserPoolId: userPoolId, UserPoolClientId: clientId } = outputs;
  if (!userPoolId || !clientId) {
    throw new Error(
      `stage ${options.stage} has no Cognito pool (it trusts its own OIDC issuer): give --token (or SMOKE_TOKEN) for a user of that issuer`,
    );
  }
  return cognitoAuth(new CognitoIdentityProviderClient(region ? { region } : {}), { userPoolId, clientId });
}

/**
 * The models the stage invokes, as the CDK app derives them (infra/stacks/reflector-model.ts)
 * from infra/config/stages.ts and the Region: `modelId` for batches, `jobModels` for summaries
 * and sleep-time runs, the embedding model (invoked in-Region). Checked with the caller's
 * credentials (preflight.ts).
 */
export function cloudModels(stage: string, region: string, config: { region?: string }): ModelAccess {
  const c = stageConfig(stage);
  const invoked = (id: string | undefined) => (id ? invocationFor(id, region, c.inferenceScope).modelId : undefined);
  return {
    region,
    models: stageModels({
      batches: invoked(c.modelId) ?? c.modelId,
      summaries: invoked(c.jobModels?.summary),
      sleepTime: invoked(c.jobModels?.sleepTime),
      embeddings: c.embeddings?.modelId,
    }),
    runtime: new BedrockRuntimeClient(config),
    control: new BedrockClient(config),
  };
}

export async function cloudTarget(options: CloudTargetOptions): Promise<SmokeTarget> {
  const config = options.region ? { region: options.region } : {};
  const cfn = new CloudFormationClient(config);
  const stacks = stackNames(options.stage);
  const [stateful, stateless] = await Promise.all([
    stackOutputs(cfn, stacks.stateful),
    stackOutputs(cfn, stacks.stateless),
  ]);
  const missing = ['TurnQueueUrl', 'MemoryBucketName']
    .filter((k) => !stateful[k])
    .concat(stateless.ApiUrl ? [] : ['ApiUrl']);
  if (missing.length > 0)
    throw new Error(
      `the stage's stacks lack the outputs ${missing.join(', ')}: deploy the current version of both stacks`,
    );
  const sqs = new SQSClient(config);
  const region = options.region ?? (await sqs.config.region());
  return {
    label: `stage ${options.stage} (${region})`,
    sqs,
    s3: new S3Client(config),
    bucketName: stateful.MemoryBucketName ?? '',
    apiUrl: stateless.ApiUrl ?? '',
    queues: await queueUrls(sqs, options.stage, stateful.TurnQueueUrl ?? ''),
    auth: authFor(stateful, options, options.region),
    logs: await functionLogGroups(cfn, stacks.stateless),
    models: cloudModels(options.stage, region, config),
  };
}
