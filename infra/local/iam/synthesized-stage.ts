/**
 * The stage as `cdk synth` produces it, read for the local stack: per function its role's
 * policies, its environment and its event source; the resource policies of the bucket,
 * queues and key; which key encrypts which resource. The app is synthesized in-process
 * (bundling skipped: the templates are the same, only the code asset differs) and its
 * intrinsics resolved to the local names (template-resolver.ts), so the local stack
 * enforces the very policies a deployment of this commit would carry.
 */
import type { StageConfig } from '../../config/stages.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stack } from 'aws-cdk-lib';
import type { FunctionKey, Permissions } from '../../permissions.js';
import type { RecursiveLoops } from '../../stacks/stateless-stack.js';
import { type CfnTemplate, type LocalEnvironment, TemplateResolver } from './template-resolver.js';

export interface PolicyDocument {
  Version?: string;
  Statement: Array<Record<string, unknown>>;
}

export interface SynthesizedFunction {
  key: FunctionKey;
  /** The physical name the local stack gives it (`reflective-memory-{stage}-{key}`). */
  functionName: string;
  roleArn: string;
  /** The principal its requests are made as: the role's session in Lambda. */
  principal: string;
  policies: Array<{ name: string; document: PolicyDocument }>;
  environment: Record<string, string>;
  /** X-Ray mode: Active, PassThrough, or none. */
  tracing?: string;
  /** Its RecursiveLoop setting (Allow or Terminate; none: Lambda's default, Terminate). */
  recursiveLoop?: string;
  /** The SQS event source mapping, when the function has one. */
  eventSource?: { queueArn: string; batchSize: number; maxConcurrency?: number };
}

export interface SynthesizedStage {
  env: LocalEnvironment;
  functions: Record<FunctionKey, SynthesizedFunction>;
  /** Resource-based policies by resource ARN: the bucket's, the queues', the key's. */
  resourcePolicies: Record<string, PolicyDocument>;
  /** The KMS key that encrypts a table, bucket or queue (by its ARN), if any. */
  encryptionKeys: Record<string, string>;
  /** How many resources of each CloudFormation type the stage's stacks hold (what a stage pays for standing still: alarms, keys, queues…). */
  resourceCounts: Record<string, number>;
}

const FUNCTIONS: Record<FunctionKey, 'signalFn' | 'idleFn' | 'reflectorFn' | 'sweepFn' | 'apiFn'> = {
  signal: 'signalFn',
  idle: 'idleFn',
  reflector: 'reflectorFn',
  sweep: 'sweepFn',
  api: 'apiFn',
};

export interface SynthesisOptions {
  stage: string;
  env: LocalEnvironment;
  /** Grant these instead of infra/permissions.ts (a test shows what a missing grant does). */
  permissions?: Record<FunctionKey, Permissions>;
  /** The stage's settings. @default stageConfig(stage) */
  config?: StageConfig;
  /** Set these RecursiveLoop settings instead of the stack's (a test shows what Lambda's default does). */
  recursiveLoops?: RecursiveLoops;
}

export async function synthesizeStage(options: SynthesisOptions): Promise<SynthesizedStage> {
  const { App } = await import('aws-cdk-lib');
  const { buildStacks } = await import('../../app.js');
  const { stageConfig } = await import('../../config/stages.js');
  const outdir = mkdtempSync(join(tmpdir(), 'reflective-memory-synth-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const { env } = options;
    const stacks = buildStacks(app, options.stage, options.config ?? stageConfig(options.stage), { account: env.account, region: env.region }, {
      ...(options.permissions ? { permissions: options.permissions } : {}),
      ...(options.recursiveLoops ? { recursiveLoops: options.recursiveLoops } : {}),
    });
    const assembly = app.synth();
    const template = (stack: Stack) => assembly.getStackByName(stack.stackName).template as CfnTemplate;
    const stateful = new TemplateResolver(template(stacks.stateful), env);
    const statelessTemplate = template(stacks.stateless);
    const stateless = new TemplateResolver(statelessTemplate, env, (name) => stateful.exported(name));
    const logicalId = (fn: keyof typeof stacks.stateless) => stacks.stateless.getLogicalId((stacks.stateless[fn] as unknown as { node: { defaultChild: never } }).node.defaultChild);
    const functions = Object.fromEntries(
      (Object.keys(FUNCTIONS) as FunctionKey[]).map((key) => [key, readFunction(key, logicalId(FUNCTIONS[key]), options.stage, statelessTemplate, stateless, env)]),
    ) as Record<FunctionKey, SynthesizedFunction>;
    const statefulTemplate = template(stacks.stateful);
    const resourceCounts: Record<string, number> = {};
    for (const t of [statefulTemplate, statelessTemplate]) for (const r of Object.values(t.Resources)) resourceCounts[r.Type] = (resourceCounts[r.Type] ?? 0) + 1;
    return { env, functions, resourcePolicies: resourcePolicies(statefulTemplate, stateful), encryptionKeys: encryptionKeys(statefulTemplate, stateful), resourceCounts };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function readFunction(key: FunctionKey, id: string, stage: string, template: CfnTemplate, resolver: TemplateResolver, env: LocalEnvironment): SynthesizedFunction {
  const fn = template.Resources[id];
  if (!fn) throw new Error(`no function ${id} in the stateless template`);
  const roleRef = fn.Properties?.Role as { 'Fn::GetAtt': [string, string] };
  const roleId = roleRef['Fn::GetAtt'][0];
  const policies = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.Roles).includes(`"${roleId}"`))
    .map(([name, r]) => ({ name, document: resolver.resolve(r.Properties?.PolicyDocument) as PolicyDocument }));
  const variables = ((fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
  const environment = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(resolver.resolve(v))]));
  const mapping = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties?.FunctionName).includes(`"${id}"`));
  const functionName = `reflective-memory-${stage}-${key}`;
  const roleArn = String(resolver.resolve(roleRef));
  const out: SynthesizedFunction = { key, functionName, roleArn, principal: `arn:${env.partition}:sts::${env.account}:assumed-role/${roleId}/${functionName}`, policies, environment };
  const tracing = (fn.Properties?.TracingConfig as { Mode?: string } | undefined)?.Mode;
  if (tracing) out.tracing = tracing;
  if (typeof fn.Properties?.RecursiveLoop === 'string') out.recursiveLoop = fn.Properties.RecursiveLoop;
  if (mapping?.Properties) {
    const p = mapping.Properties;
    const scaling = p.ScalingConfig as { MaximumConcurrency?: number } | undefined;
    out.eventSource = {
      queueArn: String(resolver.resolve(p.EventSourceArn)),
      batchSize: Number(p.BatchSize ?? 10),
      ...(scaling?.MaximumConcurrency !== undefined ? { maxConcurrency: Number(scaling.MaximumConcurrency) } : {}),
    };
  }
  return out;
}

/** The bucket's, queues' and key's resource-based policies, by the ARN of what they guard. */
function resourcePolicies(template: CfnTemplate, resolver: TemplateResolver): Record<string, PolicyDocument> {
  const out: Record<string, PolicyDocument> = {};
  const arnOf = (ref: unknown) => String(resolver.resolve({ 'Fn::GetAtt': [(ref as { Ref: string }).Ref, 'Arn'] }));
  for (const [id, r] of Object.entries(template.Resources)) {
    const p = r.Properties ?? {};
    if (r.Type === 'AWS::S3::BucketPolicy') out[arnOf(p.Bucket)] = resolver.resolve(p.PolicyDocument) as PolicyDocument;
    if (r.Type === 'AWS::SQS::QueuePolicy') for (const q of p.Queues as unknown[]) out[arnOf(q)] = resolver.resolve(p.PolicyDocument) as PolicyDocument;
    if (r.Type === 'AWS::KMS::Key') out[String(resolver.resolve({ 'Fn::GetAtt': [id, 'Arn'] }))] = resolver.resolve(p.KeyPolicy) as PolicyDocument;
  }
  return out;
}

/** Which customer managed key encrypts each table, bucket and queue (SSE-KMS). */
function encryptionKeys(template: CfnTemplate, resolver: TemplateResolver): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, r] of Object.entries(template.Resources)) {
    const p = (r.Properties ?? {}) as Record<string, unknown>;
    let key: unknown;
    if (r.Type === 'AWS::DynamoDB::Table') key = (p.SSESpecification as { KMSMasterKeyId?: unknown } | undefined)?.KMSMasterKeyId;
    if (r.Type === 'AWS::SQS::Queue') key = p.KmsMasterKeyId;
    if (r.Type === 'AWS::S3::Bucket') {
      const rules = (p.BucketEncryption as { ServerSideEncryptionConfiguration?: Array<{ ServerSideEncryptionByDefault?: { KMSMasterKeyID?: unknown } }> } | undefined)?.ServerSideEncryptionConfiguration;
      key = rules?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID;
    }
    if (key !== undefined) out[String(resolver.resolve({ 'Fn::GetAtt': [id, 'Arn'] }))] = String(resolver.resolve(key));
  }
  return out;
}
