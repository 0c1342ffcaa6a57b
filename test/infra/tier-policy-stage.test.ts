import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildStacks } from '../../infra/app.js';
import { type StageConfig, stageConfig } from '../../infra/config/stages.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';

/** Each function's TIER_POLICY in the stateless stack of a stage whose `tiers` are `tiers`. */
function tierVariables(tiers: StageConfig['tiers']): Record<string, unknown> {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const { stateless } = buildStacks(app, 'tiers', { ...stageConfig('tiers'), tiers });
  const functions = Object.entries(Template.fromStack(stateless).findResources('AWS::Lambda::Function'));
  const byId = functions.filter(([id]) => /^(Signal|Idle|Reflector|Sweep|Api)Function/.test(id));
  return Object.fromEntries(
    byId.map(([id, fn]) => [id.replace(/Function.*$/, ''), fn.Properties.Environment?.Variables?.TIER_POLICY]),
  );
}

describe("the stage's tier policy (infra/config/stages.ts `tiers`)", () => {
  it('reaches every function that applies tier rules (session close, expiry, nightly review, api), and only those', () => {
    const variables = tierVariables({ contradictionCost: 0.2, floors: { short_term: 0.25 } });
    expect(Object.keys(variables).sort()).toEqual(['Api', 'Idle', 'Reflector', 'Signal', 'Sweep']);
    expect(variables.Idle).toBeUndefined();
    for (const name of ['Signal', 'Sweep', 'Reflector', 'Api']) {
      const policy = parseTierPolicy(variables[name] as string);
      expect(policy, name).toMatchObject({ contradictionCost: 0.2, floors: { short_term: 0.25, long_term: 0.5 } });
    }
  });

  it('fails the synth on an invalid policy, naming the field', () => {
    expect(() => tierVariables({ floors: { long_term: 0.9 } })).toThrow(
      /tiers\.floors\.long_term: must be below promotionConfidence/,
    );
    expect(() => tierVariables({ contradictionCost: -1 })).toThrow(/tiers\.contradictionCost/);
  });
});
