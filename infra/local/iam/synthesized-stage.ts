/**
 * The stage as `cdk synth` produces it, read for the local harness: per function its role's
 * policies, its environment and its event source; the resource policies of the bucket,
 * queues and key; which key encrypts which resource. The app is synthesized in-process
 * (bundling skipped: the templates are the same, only the code asset differs) and its
 * intrinsics resolved to the local names (template-resolver.ts), so the local harness
 * enforces the very policies a deployment of this commit would carry.
 */
import type { StageConfig } from '../../config/stages.js';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
  /** The physical name the local harness gives it (`reflective-memory-{stage}-{key}`). */
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
  /** Share one synthesis with the stages that differ only by name (SHARED_STAGE). @default true */
  share?: boolean;
}

export async function synthesizeStage(options: SynthesisOptions): Promise<SynthesizedStage> {
  const { env } = options;
  const { templates, logicalIds } = await synthesizedTemplates(options);
  const stateful = new TemplateResolver(templates.stateful, env);
  const stateless = new TemplateResolver(templates.stateless, env, (name) => stateful.exported(name));
  const functions = Object.fromEntries(
    (Object.keys(FUNCTIONS) as FunctionKey[]).map((key) => [
      key,
      readFunction(key, logicalIds[key], options.stage, templates.stateless, stateless, env),
    ]),
  ) as Record<FunctionKey, SynthesizedFunction>;
  const resourceCounts: Record<string, number> = {};
  for (const t of [templates.stateful, templates.stateless])
    for (const r of Object.values(t.Resources)) resourceCounts[r.Type] = (resourceCounts[r.Type] ?? 0) + 1;
  return {
    env,
    functions,
    resourcePolicies: resourcePolicies(templates.stateful, stateful),
    encryptionKeys: encryptionKeys(templates.stateful, stateful),
    resourceCounts,
  };
}

/** The two stacks' templates, unresolved, and each function's logical ID in the stateless one. */
interface Synthesis {
  templates: { stateful: CfnTemplate; stateless: CfnTemplate };
  logicalIds: Record<FunctionKey, string>;
}

/**
 * The app synthesized, or the same synthesis from the cache (node_modules/.cache): keyed by the
 * options that shape the templates and by the content of every source file the app is built
 * from, so an edit of the stacks, permissions or handlers synthesizes afresh. Loading
 * aws-cdk-lib and synthesizing cost ~13 s of CPU a process, paid by every local harness started.
 *
 * Stages that differ only by name share one synthesis (SHARED_STAGE): the test suite starts ~40
 * stacks, each under its own name, from a handful of settings.
 */
async function synthesizedTemplates(options: SynthesisOptions): Promise<Synthesis> {
  if (options.share === false || !SHAREABLE_NAME.test(options.stage)) return cachedSynthesis(options);
  const { stageConfig } = await import('../../config/stages.js');
  const shared = { ...options, stage: SHARED_STAGE, config: options.config ?? stageConfig(options.stage) };
  try {
    return renamed(await cachedSynthesis(shared), SHARED_STAGE, options.stage);
  } catch (error) {
    // A setting the stacks refuse names the stage: its own name, not the shared one.
    if (error instanceof Error) error.message = error.message.replaceAll(SHARED_STAGE, options.stage);
    throw error;
  }
}

/**
 * The name a stage is synthesized under when shared, then replaced by its own in the templates.
 * 21 characters, the longest a stage name may be (stageConfig): a name that fits every limit at
 * this length fits it at its own. The templates differ from the stage's own synthesis only in
 * hashes CDK computes over construct paths (an event source mapping's logical ID, a permission's
 * Sid, an asset's key), which synthesizeStage does not read: test/infra/synthesis-sharing.test.ts.
 */
export const SHARED_STAGE = 'synthstageplaceholder';
/**
 * Names CDK writes back unchanged. Its unique IDs drop a hyphen ("loops-off" → "loopsoff"), so a
 * name with one is synthesized under its own.
 */
const SHAREABLE_NAME = /^[a-z][a-z0-9]*$/;

function renamed(synthesis: Synthesis, from: string, to: string): Synthesis {
  return JSON.parse(JSON.stringify(synthesis).replaceAll(from, to)) as Synthesis;
}

async function cachedSynthesis(options: SynthesisOptions): Promise<Synthesis> {
  const key = cacheKey(options);
  const file = join(CACHE_DIR, `${key}.json`);
  if (existsSync(file)) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Synthesis;
    } catch {
      // a torn or foreign file: synthesize again below
    }
  }
  const synthesis = await synthesizeApp(options);
  mkdirSync(CACHE_DIR, { recursive: true });
  // Written aside and renamed: processes synthesizing at once never read half a file.
  const partial = `${file}.${process.pid}.${Date.now()}`;
  writeFileSync(partial, JSON.stringify(synthesis));
  renameSync(partial, file);
  return synthesis;
}

async function synthesizeApp(options: SynthesisOptions): Promise<Synthesis> {
  const { App } = await import('aws-cdk-lib');
  const { buildStacks } = await import('../../app.js');
  const { stageConfig } = await import('../../config/stages.js');
  const outdir = mkdtempSync(join(tmpdir(), 'reflective-memory-synth-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const { env } = options;
    const stacks = buildStacks(
      app,
      options.stage,
      options.config ?? stageConfig(options.stage),
      { account: env.account, region: env.region },
      {
        ...(options.permissions ? { permissions: options.permissions } : {}),
        ...(options.recursiveLoops ? { recursiveLoops: options.recursiveLoops } : {}),
      },
    );
    const assembly = app.synth();
    const template = (stack: Stack) => assembly.getStackByName(stack.stackName).template as CfnTemplate;
    const logicalId = (fn: keyof typeof stacks.stateless) =>
      stacks.stateless.getLogicalId(
        (stacks.stateless[fn] as unknown as { node: { defaultChild: never } }).node.defaultChild,
      );
    const logicalIds = Object.fromEntries(
      (Object.keys(FUNCTIONS) as FunctionKey[]).map((key) => [key, logicalId(FUNCTIONS[key])]),
    ) as Record<FunctionKey, string>;
    return { templates: { stateful: template(stacks.stateful), stateless: template(stacks.stateless) }, logicalIds };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'reflective-memory-synth');
/** What the app is built from: its code (and what it imports), the locked dependencies, the CDK settings. */
const SOURCES = ['infra', 'lib', 'functions', 'events'];
const SOURCE_FILES = ['package-lock.json', 'cdk.json', 'tsconfig.json'];

/** A digest of the options that shape the templates and of the sources, computed once a process. */
function cacheKey(options: SynthesisOptions): string {
  sourceDigest ??= digestSources();
  const shape = {
    stage: options.stage,
    account: options.env.account,
    region: options.env.region,
    config: options.config ?? null,
    permissions: options.permissions ?? null,
    recursiveLoops: options.recursiveLoops ?? null,
  };
  return createHash('sha256').update(sourceDigest).update(JSON.stringify(shape)).digest('hex').slice(0, 32);
}

let sourceDigest: string | undefined;

function digestSources(): string {
  const hash = createHash('sha256');
  const files = [
    ...SOURCES.flatMap((dir) => filesUnder(join(ROOT, dir))),
    ...SOURCE_FILES.map((f) => join(ROOT, f)).filter((f) => existsSync(f)),
  ].sort();
  for (const f of files) hash.update(f).update('\0').update(readFileSync(f)).update('\0');
  return hash.digest('hex');
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|json|ya?ml)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

function readFunction(
  key: FunctionKey,
  id: string,
  stage: string,
  template: CfnTemplate,
  resolver: TemplateResolver,
  env: LocalEnvironment,
): SynthesizedFunction {
  const fn = template.Resources[id];
  if (!fn) throw new Error(`no function ${id} in the stateless template`);
  const roleRef = fn.Properties?.Role as { 'Fn::GetAtt': [string, string] };
  const roleId = roleRef['Fn::GetAtt'][0];
  const policies = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.Roles).includes(`"${roleId}"`))
    .map(([name, r]) => ({ name, document: resolver.resolve(r.Properties?.PolicyDocument) as PolicyDocument }));
  const variables = ((fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
    {}) as Record<string, unknown>;
  const environment = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(resolver.resolve(v))]));
  const mapping = Object.values(template.Resources).find(
    (r) =>
      r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties?.FunctionName).includes(`"${id}"`),
  );
  const functionName = `reflective-memory-${stage}-${key}`;
  const roleArn = String(resolver.resolve(roleRef));
  const out: SynthesizedFunction = {
    key,
    functionName,
    roleArn,
    principal: `arn:${env.partition}:sts::${env.account}:assumed-role/${roleId}/${functionName}`,
    policies,
    environment,
  };
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
    if (r.Type === 'AWS::SQS::QueuePolicy')
      for (const q of p.Queues as unknown[]) out[arnOf(q)] = resolver.resolve(p.PolicyDocument) as PolicyDocument;
    if (r.Type === 'AWS::KMS::Key')
      out[String(resolver.resolve({ 'Fn::GetAtt': [id, 'Arn'] }))] = resolver.resolve(p.KeyPolicy) as PolicyDocument;
  }
  return out;
}

/** Which customer managed key encrypts each table, bucket and queue (SSE-KMS). */
function encryptionKeys(template: CfnTemplate, resolver: TemplateResolver): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, r] of Object.entries(template.Resources)) {
    const p = (r.Properties ?? {}) as Record<string, unknown>;
    let key: unknown;
    if (r.Type === 'AWS::DynamoDB::Table')
      key = (p.SSESpecification as { KMSMasterKeyId?: unknown } | undefined)?.KMSMasterKeyId;
    if (r.Type === 'AWS::SQS::Queue') key = p.KmsMasterKeyId;
    if (r.Type === 'AWS::S3::Bucket') {
      const rules = (
        p.BucketEncryption as
          | {
              ServerSideEncryptionConfiguration?: Array<{
                ServerSideEncryptionByDefault?: { KMSMasterKeyID?: unknown };
              }>;
            }
          | undefined
      )?.ServerSideEncryptionConfiguration;
      key = rules?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID;
    }
    if (key !== undefined) out[String(resolver.resolve({ 'Fn::GetAtt': [id, 'Arn'] }))] = String(resolver.resolve(key));
  }
  return out;
}
