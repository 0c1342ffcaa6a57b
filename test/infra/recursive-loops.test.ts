/**
 * Lambda stops an SQS → function → same queue chain after 16 invocations unless the function's
 * RecursiveLoop is Allow (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
 * Read from the synthesized template, not from a list: a function sends to the queue that invokes
 * it when its event source mapping's queue is a resource its role may sqs:SendMessage to.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildStacks } from '../../infra/app.js';
import { stageConfig } from '../../infra/config/stages.js';

type Resource = { Type: string; Properties?: Record<string, unknown> };

interface LoopFacts {
  /** Functions (logical ids) whose role may send to the queue their event source mapping reads. */
  sendsToOwnQueue: string[];
  /** Functions whose RecursiveLoop is Allow. */
  allowed: string[];
  /** Functions with an SQS event source mapping (so that the test sees what it compares). */
  consumers: string[];
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The queues (as the template names them) a role's policies let it sqs:SendMessage to. */
function sendTargets(resources: Record<string, Resource>, roleId: string): unknown[] {
  return Object.values(resources)
    .filter(
      (r) => r.Type === 'AWS::IAM::Policy' && asList(r.Properties?.Roles).some((role) => same(role, { Ref: roleId })),
    )
    .flatMap(
      (r) =>
        (
          r.Properties?.PolicyDocument as
            | { Statement?: Array<{ Effect: string; Action: unknown; Resource: unknown }> }
            | undefined
        )?.Statement ?? [],
    )
    .filter(
      (s) =>
        s.Effect === 'Allow' && asList(s.Action).some((a) => a === 'sqs:SendMessage' || a === 'sqs:*' || a === '*'),
    )
    .flatMap((s) => asList(s.Resource));
}

function loopFacts(template: Template): LoopFacts {
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const facts: LoopFacts = { sendsToOwnQueue: [], allowed: [], consumers: [] };
  for (const [id, fn] of Object.entries(resources)) {
    if (fn.Type !== 'AWS::Lambda::Function') continue;
    if (fn.Properties?.RecursiveLoop === 'Allow') facts.allowed.push(id);
    const mappings = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && same(r.Properties?.FunctionName, { Ref: id }),
    );
    if (mappings.length === 0) continue;
    facts.consumers.push(id);
    const roleId = (fn.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0] ?? '';
    const targets = sendTargets(resources, roleId);
    if (targets.some((t) => t === '*'))
      throw new Error(`${id} may send to any queue: the test cannot tell which it sends to`);
    if (mappings.some((m) => targets.some((t) => same(t, m.Properties?.EventSourceArn))))
      facts.sendsToOwnQueue.push(id);
  }
  return facts;
}

const synth = (recursiveLoops?: Record<string, 'Allow' | 'Terminate'>) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = buildStacks(app, 'test', stageConfig('test'), undefined, recursiveLoops ? { recursiveLoops } : {});
  return Template.fromStack(stacks.stateless);
};

describe('recursive loop detection', () => {
  let facts: LoopFacts;
  beforeAll(() => {
    facts = loopFacts(synth());
  });

  it('every function that sends to the queue that invokes it allows the loop, and no other function does', () => {
    expect(facts.allowed.sort()).toEqual(facts.sendsToOwnQueue.sort());
  });

  it('sees the loop that is there: the idle check puts itself back on its own queue; the signal function sends only to others', () => {
    expect(facts.consumers.length).toBe(3);
    expect(facts.sendsToOwnQueue.some((id) => id.startsWith('IdleFunction'))).toBe(true);
    expect(facts.sendsToOwnQueue.some((id) => id.startsWith('SignalFunction'))).toBe(false);
  });

  it('fails a stage that leaves the setting out (the idle function at Terminate, Lambda’s default)', () => {
    const left = loopFacts(synth({}));
    expect(left.allowed).toEqual([]);
    expect(left.sendsToOwnQueue).not.toEqual([]);
  });
});
