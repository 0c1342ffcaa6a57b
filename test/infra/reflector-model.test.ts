import { App, type Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildStacks } from '../../infra/app.js';
import { type StageConfig, stageConfig } from '../../infra/config/stages.js';

const HAIKU = 'anthropic.claude-haiku-4-5-20251001-v1:0';

function synth(config: StageConfig, env?: Environment) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(buildStacks(app, 'check', config, env).stateless).toJSON();
  const resources = Object.entries(
    template.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>,
  );
  const statements = resources
    .filter(([id, r]) => id.startsWith('ReflectorFunction') && r.Type === 'AWS::IAM::Policy')
    .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement)
    .filter((s) => JSON.stringify(s.Action).includes('bedrock:'));
  const reflector = resources.find(
    ([id, r]) => id.startsWith('ReflectorFunction') && r.Type === 'AWS::Lambda::Function',
  )![1];
  const variables = (reflector.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  return { template, statements, modelId: variables.MODEL_ID, variables };
}

/** An `arn:${AWS::Partition}…` Fn::Join rendered as text, the partition as `<partition>`. */
const arnText = (value: unknown): string => {
  const parts = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  return parts
    .map((p) =>
      typeof p === 'string' ? p : JSON.stringify(p) === '{"Ref":"AWS::Partition"}' ? '<partition>' : JSON.stringify(p),
    )
    .join('');
};

describe('the reflector model, synthesized Region-agnostic', () => {
  const { template, statements, modelId } = synth(stageConfig('check'));
  const byRegion = (template.Mappings as Record<string, Record<string, { ModelId: string }>>).ReflectorModelByRegion!;
  const fromRegion = { Ref: 'AWS::Region' };

  it('derives MODEL_ID in CloudFormation from the stack Region', () => {
    expect(modelId).toEqual({ 'Fn::FindInMap': ['ReflectorModelByRegion', fromRegion, 'ModelId'] });
    // The id alone: the grant names no Region list (below).
    expect(byRegion['us-east-1']).toEqual({ ModelId: `us.${HAIKU}` });
    expect(byRegion['eu-west-1']?.ModelId).toBe(`eu.${HAIKU}`);
    expect(byRegion['ap-northeast-1']?.ModelId).toBe(`jp.${HAIKU}`);
    // No geographic profile of Haiku 4.5 there: a deploy fails at the lookup, not at the first call.
    expect(byRegion['ap-southeast-1']).toBeUndefined();
  });

  it("grants InvokeModel on the Region's profile and, only through it, on the foundation model in every Region", () => {
    const profile = statements.find((s) => s.Sid === 'InvokeModelThroughProfile')!;
    const models = statements.find((s) => s.Sid === 'InvokeProfileFoundationModels')!;
    expect(statements).toHaveLength(2);
    expect(profile.Action).toBe('bedrock:InvokeModel');
    const profileArn = profile.Resource as { 'Fn::Join': [string, unknown[]] };
    expect(profileArn['Fn::Join'][1]).toEqual([
      'arn:',
      { Ref: 'AWS::Partition' },
      ':bedrock:',
      fromRegion,
      ':',
      { Ref: 'AWS::AccountId' },
      ':inference-profile/',
      modelId,
    ]);
    // Every Region, so a destination Region AWS adds later is covered; only through the profile.
    expect(arnText(models.Resource)).toBe(`arn:<partition>:bedrock:*::foundation-model/${HAIKU}`);
    expect(models.Condition).toEqual({ StringEquals: { 'bedrock:InferenceProfileArn': profile.Resource } });
    // No other wildcard: the profile is the Region's own, and the actions are InvokeModel alone.
    expect(JSON.stringify(profile.Resource)).not.toContain('*');
    expect(statements.map((s) => s.Action)).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModel']);
  });
});

describe('a model per job, synthesized Region-agnostic', () => {
  const NOVA_LITE = 'amazon.nova-lite-v1:0';
  const fromRegion = { Ref: 'AWS::Region' };

  it('names the summary and sleep-time models from a table of their own, and grants each through its profile', () => {
    const { template, statements, variables } = synth({
      ...stageConfig('check'),
      jobModels: { summary: NOVA_LITE, sleepTime: NOVA_LITE },
    });
    const mappings = template.Mappings as Record<string, Record<string, { ModelId: string }>>;
    expect(Object.keys(mappings).sort()).toEqual(['ReflectorModelByRegion', 'ReflectorModelByRegion2']);
    expect(mappings.ReflectorModelByRegion2?.['eu-west-1']?.ModelId).toBe(`eu.${NOVA_LITE}`);
    const own = { 'Fn::FindInMap': ['ReflectorModelByRegion2', fromRegion, 'ModelId'] };
    expect(variables).toMatchObject({
      MODEL_ID: { 'Fn::FindInMap': ['ReflectorModelByRegion', fromRegion, 'ModelId'] },
      SUMMARY_MODEL_ID: own,
      SLEEP_TIME_MODEL_ID: own,
    });
    expect(statements.map((s) => s.Sid).sort()).toEqual([
      'InvokeModelThroughProfile',
      'InvokeModelThroughProfile2',
      'InvokeProfileFoundationModels',
      'InvokeProfileFoundationModels2',
    ]);
    expect(arnText(statements.find((s) => s.Sid === 'InvokeProfileFoundationModels2')?.Resource)).toBe(
      `arn:<partition>:bedrock:*::foundation-model/${NOVA_LITE}`,
    );
    expect(JSON.stringify(statements.find((s) => s.Sid === 'InvokeProfileFoundationModels2')?.Condition)).toContain(
      'ReflectorModelByRegion2',
    );
  });

  it('leaves the template as it was when no job has a model of its own', () => {
    const plain = synth(stageConfig('check'));
    const same = synth({ ...stageConfig('check'), jobModels: { summary: HAIKU } });
    expect(same.template).toEqual(plain.template);
    expect(plain.variables.SUMMARY_MODEL_ID).toBeUndefined();
  });
});

describe('the reflector model, synthesized for a Region', () => {
  const account = '111122223333';

  it("names eu-west-1's profile literally, and the foundation model in every Region through it", () => {
    const { template, statements, modelId } = synth(stageConfig('check'), { account, region: 'eu-west-1' });
    expect(modelId).toBe(`eu.${HAIKU}`);
    expect(template.Mappings).toBeUndefined();
    const [profile, models] = statements;
    expect(arnText(profile!.Resource)).toBe(
      `arn:<partition>:bedrock:eu-west-1:${account}:inference-profile/eu.${HAIKU}`,
    );
    expect(arnText(models!.Resource)).toBe(`arn:<partition>:bedrock:*::foundation-model/${HAIKU}`);
    expect(
      arnText(
        (models!.Condition as { StringEquals: Record<string, unknown> }).StringEquals['bedrock:InferenceProfileArn'],
      ),
    ).toBe(`arn:<partition>:bedrock:eu-west-1:${account}:inference-profile/eu.${HAIKU}`);
  });

  it('with the global scope, adds the Region-less foundation model', () => {
    const { statements, modelId } = synth(
      { ...stageConfig('check'), inferenceScope: 'global' },
      { account, region: 'ap-southeast-1' },
    );
    expect(modelId).toBe(`global.${HAIKU}`);
    expect((statements[1]!.Resource as unknown[]).map(arnText)).toEqual([
      `arn:<partition>:bedrock:*::foundation-model/${HAIKU}`,
      `arn:<partition>:bedrock:::foundation-model/${HAIKU}`,
    ]);
  });

  it("in-Region, grants the Region's foundation model alone", () => {
    const { statements, modelId } = synth(
      { ...stageConfig('check'), modelId: 'amazon.nova-lite-v1:0', inferenceScope: 'in-region' },
      { account, region: 'us-east-1' },
    );
    expect(modelId).toBe('amazon.nova-lite-v1:0');
    expect(statements).toHaveLength(1);
    expect(statements[0]!.Condition).toBeUndefined();
    expect(arnText(statements[0]!.Resource)).toBe(
      'arn:<partition>:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0',
    );
  });

  it('fails the synth for a Region the model has no profile in, naming the scope that works', () => {
    expect(() => synth(stageConfig('check'), { account, region: 'ap-southeast-1' })).toThrow(
      /no geographic inference profile callable from ap-southeast-1: use inference scope 'global'/,
    );
  });
});
