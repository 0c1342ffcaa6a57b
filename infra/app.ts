/**
 * The CDK app: one isolated copy per stage.
 *   npx cdk synth -c stage=dev
 *   npx cdk deploy --all -c stage=prod
 */
import { App, type Environment, Tags } from 'aws-cdk-lib';
import { type StageConfig, stageConfig } from './config/stages.js';
import type { FunctionKey, Permissions } from './permissions.js';
import { StatefulStack } from './stacks/stateful-stack.js';
import { type RecursiveLoops, StatelessStack } from './stacks/stateless-stack.js';

/** Both stacks of one stage: the stateful one (data) and the stateless one (functions) that uses it. */
export function buildStacks(
  app: App,
  stage: string,
  config: StageConfig,
  env?: Environment,
  options: { permissions?: Record<FunctionKey, Permissions>; recursiveLoops?: RecursiveLoops } = {},
): { stateful: StatefulStack; stateless: StatelessStack } {
  const stateful = new StatefulStack(app, `reflective-memory-${stage}-stateful`, { stage, config, env });
  const stateless = new StatelessStack(app, `reflective-memory-${stage}-stateless`, {
    stage,
    config,
    env,
    table: stateful.table,
    bucket: stateful.bucket,
    queues: stateful.queues,
    dataKey: stateful.dataKey,
    users: stateful.users,
    alarmTopic: stateful.alarmTopic,
    ...(options.permissions ? { permissions: options.permissions } : {}),
    ...(options.recursiveLoops ? { recursiveLoops: options.recursiveLoops } : {}),
  });
  return { stateful, stateless };
}

export function buildApp(app: App): { stateful: StatefulStack; stateless: StatelessStack } {
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  const stacks = buildStacks(app, stage, stageConfig(stage), {
    account: process.env.CDK_DEFAULT_ACCOUNT,
    region: process.env.CDK_DEFAULT_REGION,
  });
  Tags.of(app).add('project', 'reflective-memory');
  Tags.of(app).add('stage', stage);
  return stacks;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const app = new App();
  buildApp(app);
  app.synth();
}
