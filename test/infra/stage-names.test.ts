/**
 * What keeps two copies of the service apart on the synthesized templates: the bucket's name
 * carries the account and the Region (bucket names are global: the same stage in two Regions
 * of one account), and the model cost metric the cost alarm reads carries the stage (one
 * namespace for every stage in an account: dev's cost must not raise prod's alarm).
 */
import { App, type Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildStacks } from '../../infra/app.js';
import { stageConfig } from '../../infra/config/stages.js';

function synth(stage: string, env?: Environment) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = buildStacks(app, stage, stageConfig(stage), env);
  return { stateful: Template.fromStack(stacks.stateful), stateless: Template.fromStack(stacks.stateless) };
}

const bucketName = (template: Template): unknown =>
  Object.values(template.findResources('AWS::S3::Bucket'))[0]?.Properties.BucketName;
const account = '111122223333';

describe('the bucket name', () => {
  it('carries the stage, the account and the Region, synthesized Region-agnostic', () => {
    expect(bucketName(synth('check').stateful)).toEqual({
      'Fn::Join': ['', ['reflective-memory-check-', { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }]],
    });
  });

  it('differs between two Regions of one account', () => {
    expect(bucketName(synth('check', { account, region: 'eu-west-1' }).stateful)).toBe(
      `reflective-memory-check-${account}-eu-west-1`,
    );
    expect(bucketName(synth('check', { account, region: 'us-east-1' }).stateful)).toBe(
      `reflective-memory-check-${account}-us-east-1`,
    );
  });

  it("fails the synth of a name over S3's 63 characters, naming how much shorter the stage must be", () => {
    // 18 + 21 + 1 + 12 + 1 + 14 = 67 characters.
    expect(() => synth('a-very-long-stage-nam', { account, region: 'ap-southeast-4' })).toThrow(
      /over S3's 63: use a stage name 4 characters shorter/,
    );
  });
});

describe('the model cost metric', () => {
  const costAlarm = (template: Template) =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => a.Properties.MetricName === 'ModelCostUsd',
    )?.Properties;

  it("is read by each stage's cost alarm with the stage as a dimension, so dev and prod do not add up", () => {
    for (const stage of ['dev', 'prod']) {
      const { stateless } = synth(stage);
      expect(costAlarm(stateless)?.Dimensions).toEqual([{ Name: 'stage', Value: stage }]);
      // The reflector is told its stage, the value it gives the metric (lib/kernel/metrics.adapter.ts).
      const reflector = Object.entries(stateless.findResources('AWS::Lambda::Function')).find(([id]) =>
        id.startsWith('ReflectorFunction'),
      )?.[1];
      expect(reflector?.Properties.Environment.Variables.STAGE).toBe(stage);
    }
  });
});

describe('the stale search index metric', () => {
  it("is published with the stage as a dimension and read by each stage's alarm with it", () => {
    for (const stage of ['dev', 'prod']) {
      const { stateless } = synth(stage);
      const filter = Object.values(stateless.findResources('AWS::Logs::MetricFilter')).find(
        (f) => f.Properties.MetricTransformations[0].MetricName === 'StaleSearchIndex',
      )?.Properties;
      expect(filter?.FilterPattern).toContain(`($.stage = "${stage}")`);
      expect(filter?.MetricTransformations[0].Dimensions).toEqual([{ Key: 'stage', Value: '$.stage' }]);
      const alarm = Object.values(stateless.findResources('AWS::CloudWatch::Alarm')).find(
        (a) => a.Properties.MetricName === 'StaleSearchIndex',
      )?.Properties;
      expect(alarm?.Dimensions).toEqual([{ Name: 'stage', Value: stage }]);
      // The api gives its lines that stage (functions/api/create-handler.ts).
      const api = Object.entries(stateless.findResources('AWS::Lambda::Function')).find(([id]) =>
        id.startsWith('ApiFunction'),
      )?.[1];
      expect(api?.Properties.Environment.Variables.STAGE).toBe(stage);
    }
  });
});
