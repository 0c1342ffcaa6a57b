/**
 * Benchmark (issue 7): each function's bundle as the CDK app builds it (esbuild, ESM,
 * node22, minified, `@aws-sdk/*` left to the Lambda runtime as NodejsFunction does for
 * Node 18+), its size, and its init time: importing the bundle in a fresh Node process
 * (module scope: SDK clients, configuration, Powertools). Median of several processes.
 * Each function is also measured with the SDK bundled in, the lever for init time.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { synthesizeStage } from '../infra/local/iam/synthesized-stage.js';
import type { FunctionKey } from '../infra/permissions.js';

export interface ColdStartRow {
  fn: string;
  bundleBytes: number;
  initMsMedian: number;
  initMsMax: number;
  /** The same function with the AWS SDK bundled in instead of left to the runtime. */
  sdkBundled: { bundleBytes: number; initMsMedian: number };
}

const ROOT = new URL('../', import.meta.url).pathname;

export async function benchColdStart(runs = 5): Promise<ColdStartRow[]> {
  // Inside the project, so the bundles' imports of the runtime-provided SDK resolve from node_modules (ESM ignores NODE_PATH).
  const out = join(ROOT, '.local/bundles');
  mkdirSync(out, { recursive: true });
  const fns = readdirSync(join(ROOT, 'functions')).filter((f) => statSync(join(ROOT, 'functions', f)).isDirectory()).sort();
  // Each function's environment as the stack sets it (functions/<name>/env.ts is read at init).
  const account = '000000000000';
  const stage = await synthesizeStage({ stage: 'bench', env: { account, region: 'us-east-1', partition: 'aws', queueUrl: (name) => `https://sqs.us-east-1.amazonaws.com/${account}/${name}` } });
  const rows: ColdStartRow[] = [];
  const measure = async (fn: string, sdkExternal: boolean) => {
    const outfile = join(out, `${fn}${sdkExternal ? '' : '.sdk-bundled'}.mjs`);
    await build({
      entryPoints: [join(ROOT, 'functions', fn, 'handler.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      mainFields: ['module', 'main'],
      minify: true,
      external: sdkExternal ? ['@aws-sdk/*'] : [],
      banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
      outfile,
      logLevel: 'silent',
    });
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const res = spawnSync(process.execPath, ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(outfile)}); console.log(performance.now() - t);`], {
        encoding: 'utf8',
        cwd: ROOT,
        env: {
          ...process.env,
          ...stage.functions[fn as FunctionKey].environment,
          AWS_REGION: 'us-east-1',
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          POWERTOOLS_METRICS_DISABLED: 'true',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
      });
      const ms = Number(res.stdout.trim().split('\n').at(-1));
      if (res.status !== 0 || !Number.isFinite(ms)) throw new Error(`init of ${fn} failed: ${res.stderr.slice(0, 500)}`);
      times.push(ms);
    }
    times.sort((a, b) => a - b);
    return { bundleBytes: statSync(outfile).size, initMsMedian: times[Math.floor(times.length / 2)] ?? 0, initMsMax: times.at(-1) ?? 0 };
  };
  for (const fn of fns) {
    const asDeployed = await measure(fn, true);
    const bundled = await measure(fn, false);
    rows.push({ fn, ...asDeployed, sdkBundled: { bundleBytes: bundled.bundleBytes, initMsMedian: bundled.initMsMedian } });
  }
  return rows;
}
