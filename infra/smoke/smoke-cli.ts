/**
 * npm run smoke -- --stage NAME [--token JWT] [--user ID] [--model ID] [--timeout SECONDS] [--region R]
 * npm run smoke -- --local [--state FILE]
 *
 * Publishes a short conversation to a deployed stage (or the running local harness) and checks
 * that it landed: one line per check (ok / FAILED with cause and where to look), then, as the
 * last line, one JSON object with every check. Exit 0 only when every check passed; 1 when
 * one failed or the stage could not be read; 2 for a usage error.
 */
import { parseArgs } from 'node:util';
import { cloudTarget } from './cloud-target.js';
import { formatCheck, reportJson, runSmoke, type SmokeReport } from './smoke.js';
import type { SmokeTarget } from './target.js';

const USAGE =
  'usage: npm run smoke -- --stage NAME [--token JWT] [--user ID] [--model ID] [--timeout SECONDS] [--region REGION]  |  npm run smoke -- --local';

const { values } = parseArgs({
  options: {
    stage: { type: 'string' },
    local: { type: 'boolean', default: false },
    state: { type: 'string' },
    token: { type: 'string' },
    user: { type: 'string' },
    model: { type: 'string' },
    timeout: { type: 'string', default: '300' },
    region: { type: 'string' },
  },
  strict: true,
});

const timeoutSeconds = Number(values.timeout);
if ((values.stage === undefined) === !values.local || !(timeoutSeconds > 0)) {
  console.error(USAGE);
  process.exit(2);
}

async function target(): Promise<SmokeTarget> {
  if (values.local) {
    // Imported here so that a cloud run never loads the local harness's modules.
    const { readStackInfo } = await import('../local/stack-info.js');
    const { mintToken } = await import('../local/tokens.js');
    const { localTarget } = await import('./local-target.js');
    const info = readStackInfo(values.state);
    return localTarget(info, (users) => mintToken(info.tokenSecret, { sub: `smoke-${users.join('+')}`, users }));
  }
  const token = values.token ?? process.env.SMOKE_TOKEN;
  return cloudTarget({
    stage: values.stage ?? '',
    ...(values.region ? { region: values.region } : {}),
    ...(token ? { token } : {}),
    ...(values.user ? { userId: values.user } : {}),
  });
}

let report: SmokeReport;
try {
  const t = await target();
  console.error(`smoke test of ${t.label}: publishing, then waiting up to ${timeoutSeconds} s for the pipeline`);
  report = await runSmoke(t, {
    timeoutMs: timeoutSeconds * 1000,
    ...(values.user ? { userId: values.user } : {}),
    ...(values.model ? { expectedModelId: values.model } : {}),
    onProgress: (message) => console.error(message),
  });
} catch (error) {
  // The stage could not be read (no stack, no permission): one failed check says so.
  const where = values.stage ? `stage ${values.stage}` : 'local harness';
  report = {
    ok: false,
    target: where,
    userId: '',
    durationMs: 0,
    checks: [
      {
        id: 'target',
        title: `read ${where}`,
        ok: false,
        detail: 'could not read the stage',
        cause: `${(error as Error).name}: ${(error as Error).message}`,
        lookAt: "the caller's AWS credentials and region, and the IAM actions in the README's smoke test section",
      },
    ],
  };
}
for (const check of report.checks) console.log(formatCheck(check));
console.log(reportJson(report));
process.exit(report.ok ? 0 : 1);
