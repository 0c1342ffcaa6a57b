/**
 * Benchmark: each function's bundle as the deployment builds it, its size,
 * and its init time. The bundle is made by the MemoryFunction construct itself (CDK's
 * NodejsFunction running the local esbuild with our bundling options), so the bench cannot
 * drift from what `cdk deploy` uploads: the AWS SDK inside, the source map beside it. Init is
 * loading that bundle in a fresh Node process, as the Lambda runtime loads a handler, with the
 * function's environment as the stack sets it (NODE_OPTIONS=--enable-source-maps included, so
 * Node reads the map as in Lambda): the module and its module scope (SDK clients,
 * configuration, Powertools).
 * Median of several processes. Lambda's own start (the runtime's bootstrap, unpacking the
 * code) and its CPU share at the function's memory size are not in it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import { MemoryFunction } from '../infra/constructs/memory-function.js';
import { synthesizeStage } from '../infra/local/iam/synthesized-stage.js';
import type { FunctionKey } from '../infra/permissions.js';

export interface ColdStartRow {
  fn: string;
  bundleBytes: number;
  sourceMapBytes: number;
  initMsMedian: number;
  initMsMax: number;
}

const ROOT = new URL('../', import.meta.url).pathname;

/** A function as the deployment bundles it: its directory, its handler file, and whether that is an ES module. */
export interface FunctionBundle {
  dir: string;
  bundle: string;
  esm: boolean;
}

/** Bundle functions/<fn>/handler.ts with the MemoryFunction construct into the stack's (bundling) app. */
export function bundleFunction(stack: Stack, fn: string): FunctionBundle {
  const fnConstruct = new MemoryFunction(stack, fn, {
    entry: join(ROOT, 'functions', fn, 'handler.ts'),
    projectRoot: ROOT,
    timeoutSeconds: 30,
  });
  const staging = fnConstruct.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
  if (!staging) throw new Error(`no bundled asset for ${fn}`);
  // The runtime's loader (aws-lambda-nodejs-runtime-interface-client, src/UserFunction.js): index.js through require(), index.mjs through import().
  const dir = staging.absoluteStagedPath;
  const esm = existsSync(join(dir, 'index.mjs'));
  return { dir, bundle: join(dir, esm ? 'index.mjs' : 'index.js'), esm };
}

export async function benchColdStart(runs = 5): Promise<ColdStartRow[]> {
  const fns = readdirSync(join(ROOT, 'functions'))
    .filter((f) => statSync(join(ROOT, 'functions', f)).isDirectory())
    .sort();
  // Each function's environment as the stack sets it (functions/<name>/env.ts is read at init).
  const account = '000000000000';
  const stage = await synthesizeStage({
    stage: 'bench',
    env: {
      account,
      region: 'us-east-1',
      partition: 'aws',
      queueUrl: (name) => `https://sqs.us-east-1.amazonaws.com/${account}/${name}`,
    },
  });
  // Outside the project, like /var/task: a bundle that needed anything from node_modules would fail to load here too.
  const outdir = mkdtempSync(join(tmpdir(), 'cold-start-'));
  try {
    const stack = new Stack(new App({ outdir }), 'ColdStart');
    const rows: ColdStartRow[] = [];
    for (const fn of fns) {
      const { dir, bundle, esm } = bundleFunction(stack, fn);
      const load = esm ? `await import(${JSON.stringify(bundle)})` : `require(${JSON.stringify(bundle)})`;
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const res = spawnSync(
          process.execPath,
          [
            ...(esm ? ['--input-type=module'] : []),
            '-e',
            `const t = performance.now(); ${load}; console.log(performance.now() - t);`,
          ],
          {
            encoding: 'utf8',
            cwd: dir,
            env: {
              ...process.env,
              ...stage.functions[fn as FunctionKey].environment,
              AWS_REGION: 'us-east-1',
              POWERTOOLS_LOG_LEVEL: 'ERROR',
              POWERTOOLS_METRICS_DISABLED: 'true',
              AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            },
          },
        );
        const ms = Number(res.stdout.trim().split('\n').at(-1));
        if (res.status !== 0 || !Number.isFinite(ms))
          throw new Error(`init of ${fn} failed: ${res.stderr.slice(0, 500)}`);
        times.push(ms);
      }
      times.sort((a, b) => a - b);
      rows.push({
        fn,
        bundleBytes: statSync(bundle).size,
        sourceMapBytes: statSync(`${bundle}.map`).size,
        initMsMedian: times[Math.floor(times.length / 2)] ?? 0,
        initMsMax: times.at(-1) ?? 0,
      });
    }
    return rows;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
