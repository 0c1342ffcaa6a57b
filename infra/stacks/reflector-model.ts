/**
 * The model id the reflector invokes and its InvokeModel grant, derived from the stage's
 * foundation model and inference scope (infra/config/stages.ts) and the stack's Region,
 * with the table in lib/model/bedrock-models.ts.
 *
 * The stack may be synthesized Region-agnostic (`env.region` a token: `cdk synth` without
 * credentials, the CDK tests), so the derivation happens in CloudFormation: a mapping from
 * each Region the model can be invoked from to the id to invoke, read with Fn::FindInMap on
 * AWS::Region. A deploy to a Region the model has no profile in then fails
 * at the mapping lookup instead of at the first model call. With a concrete Region (what
 * `cdk deploy` synthesizes) the values are literals and an unsupported Region fails the
 * synth, naming what to change. Deriving it in CloudFormation rather than at cold start
 * (from AWS_REGION) keeps the MODEL_ID variable and the grant one derivation, readable in
 * the template, and the function code free of model routing.
 *
 * The grant: bedrock:InvokeModel (which Converse needs) on the inference profile in the stack's
 * Region, and on the foundation model in every Region (`arn:…:bedrock:*::foundation-model/<id>`),
 * the latter only through that profile (condition bedrock:InferenceProfileArn = the profile's
 * ARN). Bedrock authorizes a call through a profile on the profile and on the foundation model
 * in the Region it routes the call to: "If you specify an inference profile in the Resource
 * field, you must also specify the foundation model in each Region associated with it"
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html); the
 * example of https://docs.aws.amazon.com/bedrock/latest/userguide/geographic-cross-region-inference.html
 * limits the foundation models to calls through the profile with that condition. Destination
 * Regions are AWS's to set, per profile and source Region, opt-in Regions included, and AWS asks
 * that policies allow inference in all of them
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html). So the
 * grant names no list of them: a list kept by hand falls behind when AWS adds a Region, and the
 * calls routed there are denied. AWS CDK's own helper (@aws-cdk/aws-bedrock-alpha CrossRegionInferenceProfile.grantInvoke)
 * grants the model in every Region in the same way; the condition keeps the wildcard from
 * allowing any direct call of the model. A global profile also routes through the Region-less
 * foundation-model ARN `arn:aws:bedrock:::foundation-model/<id>`, named as well
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html).
 * In-Region use is the foundation model of the stack's Region alone, unconditioned.
 */
import { Aws, CfnMapping, type Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NagPackSuppression } from 'cdk-nag';
import { type InferenceScope, invocationFor, invocationsByRegion } from '../../lib/model/bedrock-models.js';
import type { ModelJob, StageConfig } from '../config/stages.js';

const MAPPING_ID = 'ReflectorModelByRegion';

type StageModels = Pick<StageConfig, 'modelId' | 'inferenceScope' | 'jobModels'>;

/** One model the stage invokes: its foundation model id, its Region table's id and its statements' Sid suffix. */
interface ModelConfig {
  modelId: string;
  inferenceScope: InferenceScope;
  /** '' for the stage's `modelId`, then 2, 3… for the other models of `jobModels`. */
  suffix: string;
}

/** The foundation model a job runs on: its own from `jobModels`, else the stage's `modelId` (batches). */
export const jobModel = (config: StageModels, job?: ModelJob): string =>
  (job && config.jobModels?.[job]) || config.modelId;

/** Each distinct model the stage invokes, the stage's `modelId` first. */
function stageModels(config: StageModels): ModelConfig[] {
  const ids = [...new Set([config.modelId, ...Object.values(config.jobModels ?? {})])];
  return ids.map((modelId, i) => ({
    modelId,
    inferenceScope: config.inferenceScope,
    suffix: i === 0 ? '' : String(i + 1),
  }));
}

const modelOf = (config: StageModels, modelId: string): ModelConfig =>
  stageModels(config).find((m) => m.modelId === modelId) as ModelConfig;

/**
 * The foundation-model ARNs a call through the model's inference profile may run on: the model
 * in every Region (`*`), and Region-less for a global profile (see the module's comment).
 */
function profileFoundationModelArns(model: ModelConfig, partition: string): string[] {
  const everyRegion = `arn:${partition}:bedrock:*::foundation-model/${model.modelId}`;
  return model.inferenceScope === 'global'
    ? [everyRegion, `arn:${partition}:bedrock:::foundation-model/${model.modelId}`]
    : [everyRegion];
}

const regionIsConcrete = (stack: Stack) => !Token.isUnresolved(stack.region);

/** A model's Region → id table, created once per stack and model. */
function regionMapping(stack: Stack, model: ModelConfig): CfnMapping {
  const id = `${MAPPING_ID}${model.suffix}`;
  const existing = stack.node.tryFindChild(id);
  if (existing) return existing as CfnMapping;
  const rows = invocationsByRegion(model.modelId, model.inferenceScope);
  if (rows.length === 0)
    throw new Error(
      `${model.modelId} cannot be invoked with inference scope '${model.inferenceScope}' from any Region we know (lib/model/bedrock-models.ts)`,
    );
  const mapping = Object.fromEntries(rows.map(({ region, invocation }) => [region, { ModelId: invocation.modelId }]));
  return new CfnMapping(stack, id, { mapping, lazy: false });
}

/** The id to invoke a model by: a literal with a concrete Region, else `{"Fn::FindInMap": ["ReflectorModelByRegion…", {"Ref": "AWS::Region"}, "ModelId"]}`. */
function invocationId(stack: Stack, model: ModelConfig): string {
  if (regionIsConcrete(stack)) return invocationFor(model.modelId, stack.region, model.inferenceScope).modelId;
  return regionMapping(stack, model).findInMap(Aws.REGION, 'ModelId');
}

/** The id the reflector invokes for a job (MODEL_ID without one: the batches' model). */
export function modelIdFor(stack: Stack, config: StageModels, job?: ModelJob): string {
  return invocationId(stack, modelOf(config, jobModel(config, job)));
}

/** The reflector's variables naming the summary and sleep-time models, set only where a job has a model of its own. */
export function jobModelEnvironment(
  stack: Stack,
  config: StageModels,
): { SUMMARY_MODEL_ID?: string; SLEEP_TIME_MODEL_ID?: string } {
  const own = (job: ModelJob) => jobModel(config, job) !== config.modelId;
  return {
    ...(own('summary') ? { SUMMARY_MODEL_ID: modelIdFor(stack, config, 'summary') } : {}),
    ...(own('sleepTime') ? { SLEEP_TIME_MODEL_ID: modelIdFor(stack, config, 'sleepTime') } : {}),
  };
}

/** The InvokeModel statements of the function that calls the models: each model's (see the module's comment). */
export function modelGrant(stack: Stack, config: StageModels): PolicyStatement[] {
  return stageModels(config).flatMap((model) => grantOf(stack, model));
}

function grantOf(stack: Stack, model: ModelConfig): PolicyStatement[] {
  if (model.inferenceScope === 'in-region') {
    // invocationId validates the Region (synth) or looks it up in the table (deploy).
    const inRegion = `arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${invocationId(stack, model)}`;
    return [
      new PolicyStatement({
        sid: `InvokeModelInRegion${model.suffix}`,
        actions: ['bedrock:InvokeModel'],
        resources: [inRegion],
      }),
    ];
  }
  const profileArn = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${invocationId(stack, model)}`;
  return [
    new PolicyStatement({
      sid: `InvokeModelThroughProfile${model.suffix}`,
      actions: ['bedrock:InvokeModel'],
      resources: [profileArn],
    }),
    new PolicyStatement({
      sid: `InvokeProfileFoundationModels${model.suffix}`,
      actions: ['bedrock:InvokeModel'],
      resources: profileFoundationModelArns(model, stack.partition),
      conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
    }),
  ];
}

/** The InvokeModel statements of one job's model alone (the batch inference service role's: infra/constructs/sleep-time-batch.ts). */
export function jobModelGrant(stack: Stack, config: StageModels, job?: ModelJob): PolicyStatement[] {
  return grantOf(stack, modelOf(config, jobModel(config, job)));
}

/**
 * The foundation-model ARNs of a job's model: in the stack's Region (in-Region use), or in every
 * Region its inference profile routes to. bedrock:CreateModelInvocationJob is authorized on
 * foundation models, custom models and jobs, not on inference profiles (the Service Authorization
 * Reference: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html).
 */
export function jobFoundationModelArns(stack: Stack, config: StageModels, job?: ModelJob): string[] {
  const model = modelOf(config, jobModel(config, job));
  if (model.inferenceScope === 'in-region')
    return [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${invocationId(stack, model)}`];
  return profileFoundationModelArns(model, stack.partition);
}

/**
 * The cdk-nag AwsSolutions-IAM5 suppression of the one wildcard the grant carries on purpose:
 * each profile model's foundation model in every Region (`bedrock:*`), named exactly, so any
 * other wildcard on the role is still reported. None for in-Region use.
 */
export function modelGrantWildcards(config: StageModels): NagPackSuppression | null {
  const models = stageModels(config).filter((m) => m.inferenceScope !== 'in-region');
  if (models.length === 0) return null;
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return {
    id: 'AwsSolutions-IAM5',
    reason:
      "bedrock:InvokeModel on the foundation model in every Region, only through the stage's inference profile (condition bedrock:InferenceProfileArn): the profile routes each call to a destination Region AWS may add to at any time (infra/stacks/reflector-model.ts).",
    appliesTo: models.map((m) => ({
      regex: `/^Resource::arn:[^/]+:bedrock:\\*::foundation-model\\/${literal(m.modelId)}$/`,
    })),
  };
}
