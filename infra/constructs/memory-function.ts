import { basename } from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type IRole, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  type ICommandHooks,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import { type ILogGroup, LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';

export interface MemoryFunctionProps
  extends Pick<NodejsFunctionProps, 'environment' | 'memorySize' | 'description' | 'recursiveLoop'> {
  /** Path of the handler module (functions/<name>/handler.ts). */
  entry: string;
  /** Repository root: where package-lock.json is. */
  projectRoot: string;
  timeoutSeconds: number;
  /** @default RetentionDays.ONE_MONTH */
  logRetention?: RetentionDays;
  /**
   * X-Ray: ACTIVE samples requests that arrive without a trace (1 per second and 5 % of the
   * rest, fixed for Lambda), PASS_THROUGH only continues a trace an upstream caller sampled
   * (https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html). X-Ray bills $5 per
   * million traces recorded; at low traffic ACTIVE records nearly every invocation.
   * @default Tracing.ACTIVE
   */
  tracing?: Tracing;
  /**
   * Files the function reads at run time, as paths under projectRoot, copied beside the bundle
   * (/var/task/<file name>) after esbuild ran.
   */
  assets?: string[];
}

/**
 * A Lambda execution role that may write only to the function's own log group, instead of
 * the AWSLambdaBasicExecutionRole managed policy (logs writes on every log group). The
 * function's other grants are added to it as usual.
 */
export function functionRole(scope: Construct, id: string, logGroup: ILogGroup): IRole {
  const role = new Role(scope, id, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  logGroup.grantWrite(role);
  return role;
}

/**
 * Our defaults for every function: Node.js 22 on ARM64, bundled by the local esbuild into
 * one CommonJS file with the AWS SDK inside and the modules of LEFT_OUT_MODULES left out,
 * source maps on (without the sources' text), X-Ray active unless told,
 * an explicit log group with retention, and a role that writes only to that log group.
 */
export class MemoryFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: MemoryFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = functionRole(scope, `${id}Role`, logGroup);
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: Duration.seconds(props.timeoutSeconds),
      tracing: props.tracing ?? Tracing.ACTIVE,
      logGroup,
      role,
      description: props.description,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: bundlingOptions(props.assets ?? []),
      ...(props.recursiveLoop ? { recursiveLoop: props.recursiveLoop } : {}),
    });
    suppressNagFindings(this, role);
  }
}

/**
 * Modules that the MCP SDK (@modelcontextprotocol/sdk, bundled into the api function)
 * imports for code paths this project never takes; each is bundled as
 * infra/constructs/left-out-module.ts instead, which throws if reached. They took 212 KB of
 * the api bundle's 1,234 (1,022 without them; esbuild's metafile names them), which put it
 * over the goal of 1,024 KB (test/infra/bundle.test.ts).
 * - ajv, ajv-formats (and fast-uri through ajv): the SDK's server builds its default JSON
 *   Schema validator from them only when it is given none (functions/api/mcp.ts gives its
 *   own), and validates only elicitation answers, which that server never asks for.
 * - zod/v3, zod-to-json-schema: the SDK's paths for zod 3 schemas; the contract's schemas
 *   are zod 4, which the SDK validates and turns into JSON Schema with zod 4 itself.
 * - @aws-sdk/token-providers (and the SSO OIDC client of @aws-sdk/nested-clients through it,
 *   20 KB): the Bedrock Runtime client's bearer-token auth, for Amazon Bedrock API keys set as
 *   AWS_BEARER_TOKEN_BEDROCK (https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html).
 *   Our functions sign with their role's SigV4 credentials and set no such key; the client
 *   asks the token provider only when it is given one. It put the api bundle, once it called
 *   Titan embeddings and read query dates, over 1,024 KB.
 * - @aws-sdk/eventstream-handler-node (2 KB): the Bedrock Runtime client's handler for
 *   requests that stream events up (InvokeModelWithBidirectionalStream, the one command
 *   built with the event-stream plugin, its commandBuilder's _mw1). The client asks its
 *   provider for a handler when it is built, so the stand-in's provider returns one that
 *   throws if used; Converse and InvokeModel never use it.
 * test/infra/bundle.test.ts runs MCP requests through the api bundle built with these, and
 * sees it sign its requests with the environment's keys.
 */
const LEFT_OUT_MODULES = [
  'ajv',
  'ajv-formats',
  'zod/v3',
  'zod-to-json-schema',
  '@aws-sdk/token-providers',
  '@aws-sdk/eventstream-handler-node',
];
/** Relative to the project root, where esbuild runs (an alias's path: https://esbuild.github.io/api/#alias). */
const LEFT_OUT_MODULE = './infra/constructs/left-out-module.ts';
/** The SDK's default credential chain, bundled as the environment's credentials alone (lambda-credentials.ts says why). */
const CREDENTIAL_CHAIN = '@aws-sdk/credential-provider-node=./infra/constructs/lambda-credentials.ts';
/**
 * yaml (front-matter.ts) as its ES module build, the one its package serves under the
 * "default" export condition; the "node" condition's is CommonJS, which esbuild keeps whole.
 * The same code, but for warnings written with console.warn instead of process.emitWarning;
 * esbuild drops what front-matter.ts does not reach (14 KB).
 */
const YAML_AS_ES_MODULE = 'yaml=./node_modules/yaml/browser/index.js';

/** How esbuild bundles every function; `assets` are copied beside the bundle afterwards. */
function bundlingOptions(assets: readonly string[]): BundlingOptions {
  return {
    // CommonJS out, built from the dependencies' ES module builds (mainFields), which
    // esbuild tree-shakes. The runtime loads a .js handler without a package.json "type":
    // "module" through require() (aws-lambda-nodejs-runtime-interface-client,
    // src/UserFunction.js), so the bundle's Node built-ins come through require too. An ES
    // module bundle imports node:http (the SDK's IMDS credential provider does) as a module
    // namespace, and on Node 22 building that namespace reads every export, which loads
    // undici behind http's lazy WebSocket, CloseEvent and MessageEvent getters. Measured in
    // fresh processes on this 2-core machine under load: an ES module bundle's init was
    // 25–40 ms (~10 %) longer on Node 22, ~5–10 % on Node 20; bundle sizes are the same.
    format: OutputFormat.CJS,
    target: 'node22',
    mainFields: ['module', 'main'],
    sourceMap: true,
    // With NODE_OPTIONS=--enable-source-maps Node reads and parses the .map while it loads
    // the bundle, at init. The mappings alone name file:line in a stack trace; without the
    // sources' text the map is ~2.7 times smaller and init 8–15 % shorter (measured).
    sourcesContent: false,
    minify: true,
    // The AWS SDK goes into the bundle instead of resolving to the copy in the Node.js 22
    // runtime ("Runtime versions nodejs18.x and later include version 3 of the SDK",
    // https://docs.aws.amazon.com/lambda/latest/dg/nodejs-package.html). AWS: "If you are
    // sensitive to Lambda cold start times, we recommend bundling your Lambda function, which
    // uses barebones SDK clients with command objects and includes JS SDK v3"
    // (https://aws.amazon.com/blogs/developer/reduce-lambda-cold-start-times-migrate-to-aws-sdk-for-javascript-v3/).
    // One minified module loads faster than the runtime's many SDK files, the SDK runs at
    // the version package-lock.json pins (the one the tests ran), and the @smithy packages
    // bundled beside it no longer meet a runtime SDK of another version.
    bundleAwsSDK: true,
    forceDockerBundling: false,
    esbuildArgs: {
      '--alias': [
        ...LEFT_OUT_MODULES.map((module) => `${module}=${LEFT_OUT_MODULE}`),
        CREDENTIAL_CHAIN,
        YAML_AS_ES_MODULE,
      ],
      // The bundled packages' license notices (/*! … */, @license) go to index.js.LEGAL.txt in the
      // asset, beside the bundle, instead of its end: kept with the code, 0.9 KB off what loads at
      // init (https://esbuild.github.io/api/#legal-comments).
      '--legal-comments': 'external',
      // A module that reads a file beside itself finds it through __dirname in this CommonJS
      // bundle and through import.meta.url only under ES modules (tsx, vitest), so esbuild's
      // warning that import.meta is empty in CommonJS does not apply to it.
      ...(assets.length > 0 ? { '--log-override:empty-import-meta': 'silent' } : {}),
    },
    ...(assets.length > 0 ? { commandHooks: copyAfterBundling(assets) } : {}),
  };
}

/** Command hooks that copy each asset (a path under the project root) into the bundle's directory. */
function copyAfterBundling(assets: readonly string[]): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      assets.map((asset) => `cp "${inputDir}/${asset}" "${outputDir}/${basename(asset)}"`),
  };
}

/** The cdk-nag findings every memory function and its role carry by design, with the reason. */
function suppressNagFindings(fn: NodejsFunction, role: IRole): void {
  NagSuppressions.addResourceSuppressions(fn, [
    {
      id: 'AwsSolutions-L1',
      reason:
        'The memory functions are pinned to Node.js 22, a supported Lambda runtime, and bundled for it (esbuild target node22); moving them to a newer runtime is a deliberate upgrade tested on its own, not a lint fix.',
    },
  ]);
  NagSuppressions.addResourceSuppressions(
    role,
    [
      {
        id: 'AwsSolutions-IAM5',
        reason:
          'Resource * on this role is only the X-Ray statement Lambda adds for active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which support no resource-level permissions; test/infra/nag.test.ts checks that no other action is granted on *.',
        appliesTo: ['Resource::*'],
      },
    ],
    true,
  );
}
