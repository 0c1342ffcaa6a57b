/**
 * The CDK app: one isolated copy per stage.
 *   npx cdk synth -c stage=dev
 *   npx cdk deploy --all -c stage=prod
 */
import { App, Tags } from 'aws-cdk-lib';
import { stageConfig } from './config/stages.js';
import { StatefulStack } from './stacks/stateful-stack.js';
import { StatelessStack } from './stacks/stateless-stack.js';

export function buildApp(app: App): { stateful: StatefulStack; stateless: StatelessStack } {
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  const config = stageConfig(stage);
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
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
  });
  Tags.of(app).add('project', 'reflective-memory');
  Tags.of(app).add('stage', stage);
  return { stateful, stateless };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const app = new App();
  buildApp(app);
  app.synth();
}
