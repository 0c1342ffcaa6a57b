/**
 * The model id the reflector invokes and its InvokeModel grant, derived from the stage's
 * foundation model and inference scope (infra/config/stages.ts) and the stack's Region,
 * with the table in lib/domain/bedrock-models.ts.
 *
 * The stack may be synthesized Region-agnostic (`env.region` a token: `cdk synth` without
 * credentials, the CDK tests), so the derivation happens in CloudFormation: a mapping from
 * each Region the model can be invoked from to its id and foundation-model ARNs, read with
 * Fn::FindInMap on AWS::Region. A deploy to a Region the model has no profile in then fails
 * at the mapping lookup instead of at the first model call. With a concrete Region (what
 * `cdk deploy` synthesizes) the values are literals and an unsupported Region fails the
 * synth, naming what to change. Deriving it in CloudFormation rather than at cold start
 * (from AWS_REGION) keeps the MODEL_ID variable and the grant one derivation, readable in
 * the template, and the function code free of model routing.
 *
 * The grant (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html:
 * "If you specify an inference profile in the Resource field, you must also specify the
 * foundation model in each Region associated with it"; the example policy of
 * https://docs.aws.amazon.com/bedrock/latest/userguide/geographic-cross-region-inference.html
 * limits the foundation models to calls through the profile with the condition
 * bedrock:InferenceProfileArn): bedrock:InvokeModel (which Converse needs) on the inference
 * profile in the stack's Region, and on the foundation model in every destination Region of
 * the profile's geography, only through that profile. A global profile also routes through
 * the Region-less foundation-model ARN `arn:aws:bedrock:::foundation-model/<id>`
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html).
 * In-Region use is the foundation model of the stack's Region alone.
 */
import { Aws, CfnMapping, type Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { invocationFor, invocationsByRegion, type ModelInvocation } from '../../lib/domain/bedrock-models.js';
import type { StageConfig } from '../config/stages.js';

const MAPPING_ID = 'ReflectorModelByRegion';

type ModelConfig = Pick<StageConfig, 'modelId' | 'inferenceScope'>;

/** The foundation-model ARNs an invocation may run on. */
function foundationModelArns(invocation: ModelInvocation, partition: string): string[] {
  const arns = invocation.destinationRegions.map((r) => `arn:${partition}:bedrock:${r}::foundation-model/${invocation.foundationModelId}`);
  return invocation.regionless ? [...arns, `arn:${partition}:bedrock:::foundation-model/${invocation.foundationModelId}`] : arns;
}

const regionIsConcrete = (stack: Stack) => !Token.isUnresolved(stack.region);

/**
 * The stack's Region → invocation table, created once per stack. Mapping values must be
 * literals, so the foundation-model ARNs name the `aws` partition: every Region of the
 * catalogue is a commercial one.
 */
function regionMapping(stack: Stack, config: ModelConfig): CfnMapping {
  const existing = stack.node.tryFindChild(MAPPING_ID);
  if (existing) return existing as CfnMapping;
  const rows = invocationsByRegion(config.modelId, config.inferenceScope);
  if (rows.length === 0) throw new Error(`${config.modelId} cannot be invoked with inference scope '${config.inferenceScope}' from any Region we know (lib/domain/bedrock-models.ts)`);
  const mapping = Object.fromEntries(rows.map(({ region, invocation }) => [region, { ModelId: invocation.modelId, FoundationModelArns: foundationModelArns(invocation, 'aws') }]));
  return new CfnMapping(stack, MAPPING_ID, { mapping, lazy: false });
}

/**
 * The MODEL_ID of the reflector: a literal with a concrete Region, else
 * `{"Fn::FindInMap": ["ReflectorModelByRegion", {"Ref": "AWS::Region"}, "ModelId"]}`.
 */
export function modelIdFor(stack: Stack, config: ModelConfig): string {
  if (regionIsConcrete(stack)) return invocationFor(config.modelId, stack.region, config.inferenceScope).modelId;
  return regionMapping(stack, config).findInMap(Aws.REGION, 'ModelId');
}

/** The InvokeModel statements of the function that calls the model (see the module's comment). */
export function modelGrant(stack: Stack, config: ModelConfig): PolicyStatement[] {
  const concrete = regionIsConcrete(stack) ? invocationFor(config.modelId, stack.region, config.inferenceScope) : null;
  const models = concrete
    ? foundationModelArns(concrete, stack.partition)
    : Token.asList(regionMapping(stack, config).findInMap(Aws.REGION, 'FoundationModelArns'));
  if (config.inferenceScope === 'in-region') return [new PolicyStatement({ sid: 'InvokeModelInRegion', actions: ['bedrock:InvokeModel'], resources: models })];
  const profileArn = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelIdFor(stack, config)}`;
  return [
    new PolicyStatement({ sid: 'InvokeModelThroughProfile', actions: ['bedrock:InvokeModel'], resources: [profileArn] }),
    new PolicyStatement({
      sid: 'InvokeProfileFoundationModels',
      actions: ['bedrock:InvokeModel'],
      resources: models,
      conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
    }),
  ];
}
