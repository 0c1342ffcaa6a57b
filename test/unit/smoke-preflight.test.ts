/**
 * The smoke pre-flight's advice for each of Bedrock's answers, with real SDK clients whose
 * requests are answered at the first middleware step (nothing leaves the process). The local
 * stack runs the same checks end to end (test/integration/smoke.test.ts).
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import { foundationModelIdOf, modelCheck, stageModels } from '../../infra/smoke/preflight.js';
import type { ModelAccess } from '../../infra/smoke/target.js';
import { isStructuredOutputRefusal } from '../../lib/model/bedrock-converse-model.adapter.js';

const config = { region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const PROFILE = 'eu.anthropic.claude-haiku-4-5-20251001-v1:0';
const named = (name: string, message: string) => Object.assign(new Error(message), { name });

type Answer = (command: string, input: Record<string, unknown>) => Record<string, unknown> | Error;

function answered<T extends { middlewareStack: unknown }>(client: T, answer: Answer, calls: string[]): T {
  (client.middlewareStack as { add(mw: unknown, o: { step: 'initialize'; name: string }): void }).add(
    (_next: unknown, context: { commandName: string }) => async (args: { input: Record<string, unknown> }) => {
      calls.push(`${context.commandName} ${JSON.stringify(args.input.modelId ?? args.input.modelIdentifier)}`);
      const out = answer(context.commandName, args.input);
      if (out instanceof Error) throw out;
      return { output: { $metadata: {}, ...out }, response: {} };
    },
    { step: 'initialize', name: 'preflightFake' },
  );
  return client;
}

function access(runtime: Answer, status: string | Error = 'ACTIVE'): { access: ModelAccess; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    access: {
      region: 'eu-west-1',
      models: [],
      runtime: answered(new BedrockRuntimeClient(config), runtime, calls),
      control: answered(
        new BedrockClient(config),
        () => (status instanceof Error ? status : { modelDetails: { modelLifecycle: { status } } }),
        calls,
      ),
    },
  };
}

const ok = () => ({ output: { message: { role: 'assistant', content: [{ text: 'ready' }] } }, stopReason: 'end_turn' });
const model = { modelId: PROFILE, jobs: ['batches'], api: 'converse' as const };

describe('the smoke pre-flight', () => {
  it('asks the foundation model behind a profile, and passes an Active model that answered', async () => {
    const { access: a, calls } = access(ok);
    expect(await modelCheck(a, model)).toMatchObject({
      id: 'modelBatches',
      ok: true,
      detail: 'answered one call; anthropic.claude-haiku-4-5-20251001-v1:0 is ACTIVE in eu-west-1',
    });
    expect(calls).toEqual([
      `ConverseCommand "${PROFILE}"`,
      'GetFoundationModelCommand "anthropic.claude-haiku-4-5-20251001-v1:0"',
    ]);
    expect(foundationModelIdOf('global.amazon.nova-lite-v1:0')).toBe('amazon.nova-lite-v1:0');
    expect(foundationModelIdOf('amazon.nova-lite-v1:0')).toBe('amazon.nova-lite-v1:0');
  });

  it('names the Marketplace permissions when the first call could not subscribe', async () => {
    const denied = named(
      'AccessDeniedException',
      'Model access is denied due to IAM user or service role is not authorized to perform the required AWS Marketplace actions (aws-marketplace:ViewSubscriptions, aws-marketplace:Subscribe) to enable access to this model.',
    );
    const c = await modelCheck(access(() => denied).access, model);
    expect(c.ok).toBe(false);
    expect(c.cause).toContain('the Converse call was refused: AccessDeniedException: Model access is denied');
    expect(c.lookAt).toContain(
      'aws-marketplace:Subscribe, aws-marketplace:Unsubscribe and aws-marketplace:ViewSubscriptions',
    );
    expect(c.lookAt).not.toContain('use-case form');
  });

  it("names the caller's own grant for an IAM denial, and GetFoundationModel's", async () => {
    const denied = named(
      'AccessDeniedException',
      `User: arn:aws:iam::111122223333:user/ops is not authorized to perform: bedrock:InvokeModel on resource: ${PROFILE}`,
    );
    const c = await modelCheck(
      access(() => denied, named('AccessDeniedException', 'not authorized to perform: bedrock:GetFoundationModel'))
        .access,
      model,
    );
    expect(c.lookAt).toContain(`your credentials may not invoke ${PROFILE}: allow bedrock:InvokeModel`);
    expect(c.lookAt).toContain('allow bedrock:GetFoundationModel for the caller');
  });

  it('fails a Legacy model that still answers, and a model id the Region does not take', async () => {
    const legacy = await modelCheck(access(ok, 'LEGACY').access, model);
    expect(legacy).toMatchObject({
      ok: false,
      cause: 'GetFoundationModel says anthropic.claude-haiku-4-5-20251001-v1:0 is LEGACY',
    });
    expect(legacy.lookAt).toContain('model-cards.html');
    const invalid = await modelCheck(
      access(() => named('ValidationException', 'The provided model identifier is invalid.')).access,
      model,
    );
    expect(invalid.lookAt).toContain('check inferenceScope');
  });

  it('checks an embedding model with InvokeModel, and each distinct model once', async () => {
    const { access: a, calls } = access(() => ({ body: new Uint8Array(), contentType: 'application/json' }));
    expect(
      (await modelCheck(a, { modelId: 'amazon.titan-embed-text-v2:0', jobs: ['embeddings'], api: 'embedding' })).ok,
    ).toBe(true);
    expect(calls[0]).toBe('InvokeModelCommand "amazon.titan-embed-text-v2:0"');
    expect(
      stageModels({
        batches: PROFILE,
        summaries: PROFILE,
        sleepTime: 'eu.amazon.nova-lite-v1:0',
        embeddings: undefined,
      }),
    ).toEqual([
      { modelId: PROFILE, jobs: ['batches', 'summaries'], api: 'converse' },
      { modelId: 'eu.amazon.nova-lite-v1:0', jobs: ['sleepTime'], api: 'converse' },
    ]);
  });
});

describe('a refusal of structured output', () => {
  it('is the field refused, not a schema refused', () => {
    expect(
      isStructuredOutputRefusal(
        named(
          'ValidationException',
          'The model returned the following errors: output_config.format: Extra inputs are not permitted',
        ),
      ),
    ).toBe(true);
    expect(
      isStructuredOutputRefusal(
        named('ValidationException', 'Malformed input request: #: extraneous key [outputConfig] is not permitted'),
      ),
    ).toBe(true);
    expect(
      isStructuredOutputRefusal(
        named(
          'ValidationException',
          "The model returned the following errors: output_config.format.schema: For 'integer' type, property 'minimum' is not supported",
        ),
      ),
    ).toBe(false);
    expect(
      isStructuredOutputRefusal(named('AccessDeniedException', 'output_config.format: Extra inputs are not permitted')),
    ).toBe(false);
  });
});
