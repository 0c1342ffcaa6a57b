/**
 * The local IAM check (infra/local/iam/) on the policies `cdk synth` produces for the local
 * stage: what each function's requests are authorized by, decided by the real engine.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { IamEnforcer } from '../../infra/local/iam/iam-enforcement.js';
import { synthesizeStage } from '../../infra/local/iam/synthesized-stage.js';
import type { FunctionKey } from '../../infra/permissions.js';

const env = {
  account: '000000000000',
  region: 'us-east-1',
  partition: 'aws',
  queueUrl: (name: string) => `http://127.0.0.1:1/000000000000/${name}`,
};
const bucket = 'reflective-memory-local-000000000000-us-east-1';
const table = 'reflective-memory-local';
let iam: IamEnforcer;

beforeAll(async () => {
  iam = new IamEnforcer(await synthesizeStage({ stage: 'local', env }));
}, 120_000);

/** The first action `fn` may not do for this SDK call, or 'allowed'. */
async function decide(
  fn: FunctionKey,
  service: string,
  operation: string,
  input: Record<string, unknown>,
): Promise<string> {
  const denied = await iam.firstDenied(fn, iam.requestsFor(service, operation, input));
  return denied ? `denied ${denied.request.action}` : 'allowed';
}

describe('the local IAM check over the synthesized policies', () => {
  it('tells PutObject from PutObjectTagging, and grants the turn documents both', async () => {
    const key = 'users/u-1/turns/0000000007/abc.md';
    expect(await decide('signal', 'S3', 'PutObject', { Bucket: bucket, Key: key, Tagging: 'kind=turn' })).toBe(
      'allowed',
    );
    expect(await decide('signal', 'S3', 'PutObject', { Bucket: bucket, Key: 'users/u-1/Knowledge/a.md' })).toBe(
      'denied s3:PutObject',
    );
    expect(await decide('signal', 'S3', 'GetObject', { Bucket: bucket, Key: key })).toBe('denied s3:GetObject');
    expect(
      await decide('reflector', 'S3', 'PutObject', {
        Bucket: bucket,
        Key: 'users/u-1/Knowledge/a.md',
        Tagging: 'kind=turn',
      }),
    ).toBe('denied s3:PutObjectTagging');
  });

  it('lets only the functions that read keys which may be missing list the bucket', async () => {
    // The sweep: its runs in collect mode read keys that may be missing, and it lists a batch job's output.
    for (const fn of ['reflector', 'api', 'sweep'] as const)
      expect(await decide(fn, 'S3', 'ListObjectsV2', { Bucket: bucket }), fn).toBe('allowed');
    for (const fn of ['signal', 'idle'] as const)
      expect(await decide(fn, 'S3', 'ListObjectsV2', { Bucket: bucket }), fn).toBe('denied s3:ListBucket');
  });

  it('lets only the sweep start a batch inference job, passing only the stage’s service role to Bedrock', async () => {
    const { roleArn } = JSON.parse(iam.stage.functions.sweep.environment.BATCH_INFERENCE ?? '{}') as {
      roleArn: string;
    };
    expect(roleArn).toMatch(/^arn:aws:iam::000000000000:role\/BatchInferenceRole/);
    const job = (role: string) => ({
      jobName: 'memory-local-nightly-202611280300',
      modelId: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
      roleArn: role,
    });
    expect(await decide('sweep', 'Bedrock', 'CreateModelInvocationJob', job(roleArn))).toBe('allowed');
    expect(await decide('reflector', 'Bedrock', 'CreateModelInvocationJob', job(roleArn))).toBe(
      'denied bedrock:CreateModelInvocationJob',
    );
    expect(
      await decide('sweep', 'Bedrock', 'CreateModelInvocationJob', job('arn:aws:iam::000000000000:role/Admin')),
    ).toBe('denied iam:PassRole');
    const state = { jobIdentifier: 'arn:aws:bedrock:us-east-1:000000000000:model-invocation-job/abc123' };
    expect(await decide('sweep', 'Bedrock', 'GetModelInvocationJob', state)).toBe('allowed');
    expect(await decide('api', 'Bedrock', 'GetModelInvocationJob', state)).toBe('denied bedrock:GetModelInvocationJob');
    expect(
      await decide('sweep', 'Bedrock', 'CreateModelInvocationJob', {
        ...job(roleArn),
        modelId: 'amazon.nova-pro-v1:0',
      }),
    ).toBe('denied bedrock:CreateModelInvocationJob');
  });

  it('authorizes a transaction by each item’s action, and queries on the index', async () => {
    const transact = {
      TransactItems: [{ Put: { TableName: table, Item: {} } }, { Update: { TableName: table, Key: {} } }],
    };
    expect(await decide('signal', 'DynamoDB', 'TransactWriteItems', transact)).toBe('allowed');
    expect(await decide('idle', 'DynamoDB', 'TransactWriteItems', transact)).toBe('denied dynamodb:UpdateItem');
    expect(await decide('sweep', 'DynamoDB', 'Query', { TableName: table, IndexName: 'gsi1' })).toBe('allowed');
    expect(await decide('signal', 'DynamoDB', 'DeleteItem', { TableName: table, Key: {} })).toBe(
      'denied dynamodb:DeleteItem',
    );
    expect(await decide('sweep', 'DynamoDB', 'DeleteItem', { TableName: table, Key: {} })).toBe('allowed');
    expect(await decide('api', 'DynamoDB', 'Scan', { TableName: table })).toBe('denied dynamodb:Scan');
  });

  it('sends only to the queues a function is granted, and calls the model only from the reflector', async () => {
    const queue = (name: string) => env.queueUrl(`reflective-memory-local-${name}`);
    expect(await decide('idle', 'SQS', 'SendMessage', { QueueUrl: queue('ReflectionQueue.fifo') })).toBe('allowed');
    // Its own queue: a check the user outtalked puts itself back.
    expect(await decide('idle', 'SQS', 'SendMessage', { QueueUrl: queue('IdleQueue') })).toBe('allowed');
    expect(await decide('idle', 'SQS', 'SendMessage', { QueueUrl: queue('TurnQueue.fifo') })).toBe(
      'denied sqs:SendMessage',
    );
    // Its own queue: a forget with more to erase goes on in a fresh job (lib/forget/forget-user.ts).
    expect(await decide('reflector', 'SQS', 'SendMessage', { QueueUrl: queue('ReflectionQueue.fifo') })).toBe(
      'allowed',
    );
    expect(await decide('reflector', 'SQS', 'SendMessage', { QueueUrl: queue('TurnQueue.fifo') })).toBe(
      'denied sqs:SendMessage',
    );
    expect(await decide('signal', 'SQS', 'ReceiveMessage', { QueueUrl: queue('TurnQueue.fifo') })).toBe('allowed');
    expect(await decide('signal', 'SQS', 'ReceiveMessage', { QueueUrl: queue('ReflectionQueue.fifo') })).toBe(
      'denied sqs:ReceiveMessage',
    );
    const model = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
    expect(await decide('reflector', 'BedrockRuntime', 'Converse', { modelId: model })).toBe('allowed');
    expect(await decide('api', 'BedrockRuntime', 'Converse', { modelId: model })).toBe('denied bedrock:InvokeModel');
    // The grant names the stage's model through its inference profile: not the bare id, not another model.
    expect(
      await decide('reflector', 'BedrockRuntime', 'Converse', { modelId: 'anthropic.claude-haiku-4-5-20251001-v1:0' }),
    ).toBe('denied bedrock:InvokeModel');
    expect(
      await decide('reflector', 'BedrockRuntime', 'Converse', {
        modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      }),
    ).toBe('denied bedrock:InvokeModel');
  });

  it('lets the reflector run the model in any Region only through the profile (bedrock:InferenceProfileArn)', async () => {
    const haiku = 'anthropic.claude-haiku-4-5-20251001-v1:0';
    const profile = `arn:aws:bedrock:us-east-1:${env.account}:inference-profile/us.${haiku}`;
    // A Converse through the profile is checked on the profile and on the foundation model in each
    // Region it may be routed to, every one carrying the profile's ARN.
    const requests = iam.requestsFor('BedrockRuntime', 'Converse', { modelId: `us.${haiku}` });
    expect(requests[0]).toEqual({ action: 'bedrock:InvokeModel', resource: profile, context: {} });
    expect(
      requests
        .slice(1)
        .map((r) => r.resource.split(':')[3])
        .sort(),
    ).toEqual(['us-east-1', 'us-east-2', 'us-west-2']);
    for (const r of requests.slice(1)) expect(r.context).toEqual({ 'bedrock:InferenceProfileArn': profile });
    const onModel = (region: string, context: Record<string, string>) => [
      { action: 'bedrock:InvokeModel', resource: `arn:aws:bedrock:${region}::foundation-model/${haiku}`, context },
    ];
    const decision = async (region: string, context: Record<string, string>) =>
      (await iam.firstDenied('reflector', onModel(region, context)))?.result ?? 'Allowed';
    // A Region the catalogue does not list (one AWS may add to the profile) is covered too.
    for (const region of ['us-east-2', 'us-west-1', 'ca-central-1'])
      expect(await decision(region, { 'bedrock:InferenceProfileArn': profile }), region).toBe('Allowed');
    // Without the profile's context, or through another profile, the same request is denied.
    expect(await decision('us-east-1', {})).toBe('ImplicitlyDenied');
    expect(await decision('us-west-1', {})).toBe('ImplicitlyDenied');
    expect(await decision('us-east-1', { 'bedrock:InferenceProfileArn': profile.replace('us.', 'global.') })).toBe(
      'ImplicitlyDenied',
    );
    expect(
      (await iam.firstDenied('api', onModel('us-east-1', { 'bedrock:InferenceProfileArn': profile })))?.result,
    ).toBe('ImplicitlyDenied');
  });

  it('checks the data key through the service that uses it (kms:ViaService)', async () => {
    const requests = iam.requestsFor('S3', 'PutObject', { Bucket: bucket, Key: 'rejected/x.json' });
    expect(requests.map((r) => r.action)).toEqual(['s3:PutObject', 'kms:GenerateDataKey']);
    expect(requests[1]?.context['kms:ViaService']).toBe('s3.us-east-1.amazonaws.com');
    expect(await decide('idle', 'S3', 'PutObject', { Bucket: bucket, Key: 'rejected/x.json' })).toBe('allowed');
    // The idle function may write to S3 but never read it: no kms:Decrypt through S3.
    expect((await iam.firstDenied('idle', [{ ...requests[1]!, action: 'kms:Decrypt' }]))?.result).toBe(
      'ImplicitlyDenied',
    );
  });
});
