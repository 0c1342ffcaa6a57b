import { App, Aspects, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';

/**
 * cdk-nag's AwsSolutions pack over a freshly built app. Every finding is either fixed in
 * the stacks or suppressed there, next to the resource, with a written reason
 * (NagSuppressions in infra/stacks/ and infra/constructs/), so a finding listed here is new
 * and needs one or the other.
 */
const findings = (stack: Stack, kind: 'findError' | 'findWarning'): string[] =>
  Annotations.fromStack(stack)
    [kind]('*', Match.stringLikeRegexp('AwsSolutions-.*'))
    .map((m) => `${m.id} ${String(m.entry.data).split('\n')[0]}`);

for (const stage of ['check', 'prod']) {
  describe(`cdk-nag AwsSolutions, stage ${stage}`, () => {
    const app = new App({ context: { stage, 'aws:cdk:bundling-stacks': [] } });
    const stacks = buildApp(app);
    Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));

    for (const [name, stack] of Object.entries(stacks)) {
      it(`leaves no unsuppressed error in the ${name} stack`, () => {
        expect(findings(stack, 'findError')).toEqual([]);
      });
      it(`leaves no unsuppressed warning in the ${name} stack`, () => {
        expect(findings(stack, 'findWarning')).toEqual([]);
      });
    }

    // Each function role suppresses IAM5 for Resource::* as X-Ray's statement: keep it true.
    it('grants nothing on Resource * but the X-Ray tracing actions', () => {
      const statements = Object.values(Template.fromStack(stacks.stateless).findResources('AWS::IAM::Policy')).flatMap(
        (p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>,
      );
      const onStar = statements.filter(
        (s) => s.Resource === '*' || (Array.isArray(s.Resource) && s.Resource.includes('*')),
      );
      expect(onStar.length).toBeGreaterThan(0);
      for (const s of onStar)
        expect([s.Action].flat().sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    });
  });
}
