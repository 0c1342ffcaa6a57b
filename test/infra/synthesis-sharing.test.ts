/**
 * The local harness synthesizes stages that differ only by name once, under SHARED_STAGE, and
 * writes each stage's own name back (infra/local/iam/synthesized-stage.ts). What it reads from
 * that (each function's policies, environment, event source and principal; the resource
 * policies; the keys) must be what the stage's own synthesis gives. The templates differ in
 * hashes CDK computes over construct paths (an event source mapping's logical ID, an asset's
 * key); none of them is read.
 */
import { describe, expect, it } from 'vitest';
import { stageConfig } from '../../infra/config/stages.js';
import { SHARED_STAGE, synthesizeStage } from '../../infra/local/iam/synthesized-stage.js';

const env = {
  account: '000000000000',
  region: 'us-east-1',
  partition: 'aws',
  queueUrl: (name: string) => `http://127.0.0.1:1/000000000000/${name}`,
};

describe('one synthesis shared by stages that differ by name', () => {
  it("reads the same policies, environments and event sources as the stage's own synthesis", async () => {
    // prod's settings: batch inference, its rule and role, alarms, tracing — the most the stacks hold.
    const options = { stage: 'sharecheck', env, config: stageConfig('prod') };
    const own = await synthesizeStage({ ...options, share: false });
    const shared = await synthesizeStage(options);
    expect(JSON.stringify(shared)).not.toContain(SHARED_STAGE);
    expect(JSON.stringify(own)).toContain('reflective-memory-sharecheck-');
    expect(shared).toEqual(own);
  }, 180_000);
});
