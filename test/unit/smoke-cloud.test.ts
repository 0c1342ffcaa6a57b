/**
 * The cloud side of `npm run smoke`, without AWS: real SDK clients whose requests are
 * answered by a fake at the first middleware step, so the commands and their inputs are
 * exactly what would go to Cognito, CloudFormation and SQS.
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { functionLogGroups, stackOutputs } from '../../infra/smoke/cloud-target.js';
import { cognitoAuth, givenTokenAuth, randomPassword } from '../../infra/smoke/cognito-auth.js';
import { runSmoke } from '../../infra/smoke/smoke.js';
import type { SmokeTarget } from '../../infra/smoke/target.js';

interface Call {
  command: string;
  input: Record<string, unknown>;
}
type Answer = (command: string, input: Record<string, unknown>) => Record<string, unknown> | Error;

const config = { region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };

/** Answers every request of `client` with `answer`, recording it; nothing leaves the process. */
function fake<T extends { middlewareStack: { add: (...args: never[]) => void } }>(
  client: T,
  answer: Answer,
): { client: T; calls: Call[] } {
  const calls: Call[] = [];
  const stack = client.middlewareStack as unknown as {
    add(
      mw: (
        next: unknown,
        context: { commandName: string },
      ) => (args: { input: Record<string, unknown> }) => Promise<unknown>,
      options: { step: 'initialize'; name: string },
    ): void;
  };
  stack.add(
    (_next, context) => async (args) => {
      calls.push({ command: context.commandName, input: args.input });
      const out = answer(context.commandName, args.input);
      if (out instanceof Error) throw out;
      return { output: { $metadata: {}, ...out }, response: {} };
    },
    { step: 'initialize', name: 'smokeFake' },
  );
  return { client, calls };
}

const named = (name: string, message = name) => Object.assign(new Error(message), { name });
const jwt = (claims: Record<string, unknown>) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const POOL = { userPoolId: 'eu-west-1_abc', clientId: 'client123' };

describe('Cognito tokens for the smoke user', () => {
  it('creates the user without an invitation, sets a permanent password, signs in with USER_PASSWORD_AUTH, then deletes the user', async () => {
    const { client, calls } = fake(new CognitoIdentityProviderClient(config), (command) =>
      command === 'InitiateAuthCommand'
        ? { AuthenticationResult: { AccessToken: 'access-token', IdToken: 'id-token' } }
        : {},
    );
    const auth = cognitoAuth(client, POOL);
    const { token, detail } = await auth.token('smoke-20260302-abc123');
    expect(token).toBe('access-token');
    expect(detail).not.toContain('access-token');
    expect(await auth.cleanup()).toBe('Cognito user smoke-20260302-abc123 deleted from eu-west-1_abc');
    expect(await auth.cleanup()).toBeNull();

    expect(calls.map((c) => c.command)).toEqual([
      'AdminCreateUserCommand',
      'AdminSetUserPasswordCommand',
      'InitiateAuthCommand',
      'AdminDeleteUserCommand',
    ]);
    const [create, setPassword, signIn, remove] = calls;
    expect(create?.input).toEqual({
      UserPoolId: 'eu-west-1_abc',
      Username: 'smoke-20260302-abc123',
      MessageAction: 'SUPPRESS',
    });
    expect(setPassword?.input).toMatchObject({
      UserPoolId: 'eu-west-1_abc',
      Username: 'smoke-20260302-abc123',
      Permanent: true,
    });
    const password = setPassword?.input.Password;
    expect(signIn?.input).toEqual({
      AuthFlow: 'USER_PASSWORD_AUTH',
      ClientId: 'client123',
      AuthParameters: { USERNAME: 'smoke-20260302-abc123', PASSWORD: password },
    });
    expect(remove?.input).toEqual({ UserPoolId: 'eu-west-1_abc', Username: 'smoke-20260302-abc123' });
  });

  it('still deletes the user when signing in fails, and deletes nothing when creating it failed', async () => {
    const refused = fake(new CognitoIdentityProviderClient(config), (command) =>
      command === 'InitiateAuthCommand'
        ? named('InvalidParameterException', 'USER_PASSWORD_AUTH flow not enabled for this client')
        : {},
    );
    const auth = cognitoAuth(refused.client, POOL);
    await expect(auth.token('smoke-x')).rejects.toThrow('USER_PASSWORD_AUTH flow not enabled');
    expect(await auth.cleanup()).toContain('deleted');
    expect(refused.calls.at(-1)?.command).toBe('AdminDeleteUserCommand');

    const denied = fake(new CognitoIdentityProviderClient(config), () => named('AccessDeniedException'));
    const auth2 = cognitoAuth(denied.client, POOL);
    await expect(auth2.token('smoke-y')).rejects.toThrow('AccessDeniedException');
    expect(await auth2.cleanup()).toBeNull();
    expect(denied.calls.map((c) => c.command)).toEqual(['AdminCreateUserCommand']);
  });

  it('reports a challenge instead of tokens as a failure', async () => {
    const { client } = fake(new CognitoIdentityProviderClient(config), (command) =>
      command === 'InitiateAuthCommand' ? { ChallengeName: 'SOFTWARE_TOKEN_MFA' } : {},
    );
    await expect(cognitoAuth(client, POOL).token('smoke-z')).rejects.toThrow('the challenge SOFTWARE_TOKEN_MFA');
  });

  it("makes passwords the pool's policy accepts, different every time", () => {
    const a = randomPassword();
    expect(a.length).toBeGreaterThanOrEqual(8);
    for (const re of [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/]) expect(a).toMatch(re);
    expect(randomPassword()).not.toBe(a);
  });

  it('runs the cleanup even when no token could be had, and reports the token check as FAILED with its cause', async () => {
    const { client, calls } = fake(new CognitoIdentityProviderClient(config), (command) =>
      command === 'InitiateAuthCommand' ? named('NotAuthorizedException', 'Incorrect username or password.') : {},
    );
    const sqs = fake(new SQSClient(config), () => ({
      Attributes: {
        ApproximateNumberOfMessages: '0',
        ApproximateNumberOfMessagesNotVisible: '0',
        ApproximateNumberOfMessagesDelayed: '0',
      },
    }));
    const q = (n: string) => ({
      name: n,
      url: `https://sqs/${n}`,
      dlqName: `${n}-dlq`,
      dlqUrl: `https://sqs/${n}-dlq`,
    });
    const target: SmokeTarget = {
      label: 'stage test',
      sqs: sqs.client,
      s3: new S3Client(config),
      bucketName: 'b',
      apiUrl: 'https://api.invalid',
      queues: { turn: q('t'), job: q('r'), idle: q('i') },
      auth: cognitoAuth(client, POOL),
      logs: { signal: 's', reflector: 'r', idle: 'i', api: 'a' },
      // No model to check: the pre-flight passes with no check, and the run goes on to the token.
      models: {
        region: 'eu-west-1',
        models: [],
        runtime: new BedrockRuntimeClient(config),
        control: new BedrockClient(config),
      },
    };
    const report = await runSmoke(target, { userId: 'smoke-fixed' });
    const c = Object.fromEntries(report.checks.map((x) => [x.id, x]));
    expect(report.ok).toBe(false);
    expect(c.token?.cause).toBe('NotAuthorizedException: Incorrect username or password.');
    expect(c.published).toMatchObject({ ok: false, detail: 'not run' });
    expect(c.cleanup).toMatchObject({ ok: true, detail: 'Cognito user smoke-fixed deleted from eu-west-1_abc' });
    expect(calls.at(-1)?.command).toBe('AdminDeleteUserCommand');
    // The dead-letter queues are still checked: their state does not need a token.
    expect(c.turnDlqEmpty?.ok).toBe(true);
  });
});

describe('a token brought for a stage with its own OIDC issuer', () => {
  it("acts on the token's own user, or a fresh one for an administrator's token", () => {
    expect(givenTokenAuth(jwt({ sub: 'abc', username: 'agent-7' })).fixedUserId).toBe('agent-7');
    expect(givenTokenAuth(jwt({ sub: 'abc', memory_users: 'u1 u2' }), 'u2').fixedUserId).toBe('u2');
    expect(givenTokenAuth(jwt({ sub: 'ops', groups: ['memory-admin'] })).fixedUserId).toBeUndefined();
    expect(() => givenTokenAuth(jwt({ sub: 'abc', username: 'agent-7' }), 'someone')).toThrow(
      '--token may not act on someone',
    );
    expect(() => givenTokenAuth('not-a-jwt')).toThrow('not a JWT');
  });
});

describe('reading the stage', () => {
  it('reads stack outputs, and says to deploy when the stack does not exist', async () => {
    const { client, calls } = fake(new CloudFormationClient(config), (_c, input) =>
      input.StackName === 'reflective-memory-dev-stateful'
        ? {
            Stacks: [
              {
                StackName: 'x',
                CreationTime: new Date(),
                StackStatus: 'CREATE_COMPLETE',
                Outputs: [
                  { OutputKey: 'TurnQueueUrl', OutputValue: 'https://q' },
                  { OutputKey: 'UserPoolId', OutputValue: 'p' },
                ],
              },
            ],
          }
        : named('ValidationError', 'Stack with id reflective-memory-nope-stateful does not exist'),
    );
    expect(await stackOutputs(client, 'reflective-memory-dev-stateful')).toEqual({
      TurnQueueUrl: 'https://q',
      UserPoolId: 'p',
    });
    await expect(stackOutputs(client, 'reflective-memory-nope-stateful')).rejects.toThrow('deploy the stage first');
    expect(calls[0]).toEqual({
      command: 'DescribeStacksCommand',
      input: { StackName: 'reflective-memory-dev-stateful' },
    });
  });

  it("finds the functions' log groups by their logical ids, across pages, and names the stack when it cannot", async () => {
    const { client } = fake(new CloudFormationClient(config), (_c, input) =>
      input.NextToken === undefined
        ? {
            NextToken: 'p2',
            StackResourceSummaries: [
              {
                LogicalResourceId: 'SignalFunctionLogs1A2B3C4D',
                PhysicalResourceId: 'stateless-SignalFunctionLogs-XYZ',
                ResourceType: 'AWS::Logs::LogGroup',
                ResourceStatus: 'CREATE_COMPLETE',
                LastUpdatedTimestamp: new Date(),
              },
            ],
          }
        : {
            StackResourceSummaries: [
              {
                LogicalResourceId: 'ReflectorFunctionLogsDEADBEEF',
                PhysicalResourceId: 'stateless-ReflectorFunctionLogs-ABC',
                ResourceType: 'AWS::Logs::LogGroup',
                ResourceStatus: 'CREATE_COMPLETE',
                LastUpdatedTimestamp: new Date(),
              },
              {
                LogicalResourceId: 'ReflectorFunction12345678',
                PhysicalResourceId: 'fn',
                ResourceType: 'AWS::Lambda::Function',
                ResourceStatus: 'CREATE_COMPLETE',
                LastUpdatedTimestamp: new Date(),
              },
            ],
          },
    );
    const logs = await functionLogGroups(client, 'reflective-memory-dev-stateless');
    expect(logs.signal).toBe('stateless-SignalFunctionLogs-XYZ');
    expect(logs.reflector).toBe('stateless-ReflectorFunctionLogs-ABC');
    expect(logs.api).toBe("the api function's log group in stack reflective-memory-dev-stateless");

    const denied = fake(new CloudFormationClient(config), () => named('AccessDenied'));
    expect((await functionLogGroups(denied.client, 's')).signal).toBe("the signal function's log group in stack s");
  });
});
