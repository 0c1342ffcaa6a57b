/**
 * IAM enforced on the local harness: every AWS request a function's clients make is
 * evaluated against that function's role policies as `cdk synth` produces them
 * (synthesized-stage.ts), with the resource's own policy (bucket, queue, key policy), by a
 * real IAM policy evaluation engine: @cloud-copilot/iam-simulate. It evaluates identity
 * and resource policies with every condition operator, KMS key-policy semantics, and
 * validates actions, resource ARNs and context keys against AWS's own service
 * authorization data — which our own reading of IAM (`covers()`, retired) could not.
 * It is AGPL-3.0: a devDependency of the local harness only, never imported by lib/ or
 * functions/, so no Lambda bundle carries it.
 *
 * A denied request fails as AWS fails it (service-errors.ts): the handler meets the error
 * it would meet in Lambda. A GET or HEAD of a missing S3 key answers 403 AccessDenied
 * unless the caller may s3:ListBucket, as S3 does
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, "Permissions").
 */
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { FunctionKey } from '../../permissions.js';
import { authorizationRequests, type IamRequest, type RequestScope } from './authorization-requests.js';
import { accessDenied, missingKeyDenied } from './service-errors.js';
import type { SynthesizedFunction, SynthesizedStage } from './synthesized-stage.js';

/** Who made a request: a function's handler, or the event source mapping polling for it. */
export type Caller = 'handler' | 'event-source';

export interface Denial {
  fn: FunctionKey;
  caller: Caller;
  operation: string;
  action: string;
  resource: string;
  result: string;
}

export interface IamStats {
  /** Requests evaluated, made by handlers (the event sources' are counted apart). */
  checked: number;
  denied: number;
  eventSourceChecked: number;
  eventSourceDenied: number;
  /** Handler requests checked, per function. */
  byFunction: Partial<Record<FunctionKey, number>>;
  /** The first denials, with the action and resource named. */
  denials: Denial[];
}

const MAX_DENIALS_KEPT = 100;
/**
 * Decisions remembered: requests name object keys (users/{u}/…), so an unbounded memo grows
 * with every user and object a long run touches (the load bench's heap snapshots: ~1,200 S3
 * object ARNs a round). The oldest decision is forgotten first; a forgotten one is simulated again.
 */
const MAX_DECISIONS_KEPT = 1000;

export class IamEnforcer {
  readonly stats: IamStats = {
    checked: 0,
    denied: 0,
    eventSourceChecked: 0,
    eventSourceDenied: 0,
    byFunction: {},
    denials: [],
  };
  private readonly decisions = new Map<string, Promise<string>>();
  private readonly scope: RequestScope;

  constructor(readonly stage: SynthesizedStage) {
    this.scope = { env: stage.env, keyOf: (arn) => stage.encryptionKeys[arn] };
  }

  /** The IAM requests of one SDK call (exported for tests). */
  requestsFor(service: string, operation: string, input: Record<string, unknown>): IamRequest[] {
    return authorizationRequests(service, operation, input, this.scope);
  }

  /** The first request `fn`'s policies do not allow, or null when all are allowed. */
  async firstDenied(
    fn: FunctionKey,
    requests: readonly IamRequest[],
  ): Promise<{ request: IamRequest; result: string } | null> {
    for (const request of requests) {
      const result = await this.decide(this.stage.functions[fn], request);
      if (result !== 'Allowed') return { request, result };
    }
    return null;
  }

  /** Add the enforcing middleware to a client that `fn` (its handler, or its event source) uses. */
  enforce<C extends { middlewareStack: { add: (...args: never[]) => void } }>(
    client: C,
    service: string,
    fn: FunctionKey,
    caller: Caller = 'handler',
  ): C {
    const add = client.middlewareStack.add as unknown as (
      mw: unknown,
      options: { step: string; name: string; priority: string },
    ) => void;
    type Next = (args: { input: Record<string, unknown> }) => Promise<unknown>;
    add(
      (next: Next, context: { commandName?: string }) => async (args: { input: Record<string, unknown> }) => {
        const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const denied = await this.firstDenied(fn, this.requestsFor(service, operation, args.input));
        this.count(fn, caller, denied !== null);
        if (denied) {
          this.record({
            fn,
            caller,
            operation: `${service}.${operation}`,
            action: denied.request.action,
            resource: denied.request.resource,
            result: denied.result,
          });
          throw accessDenied(service, this.stage.functions[fn].principal, denied.request);
        }
        try {
          return await next(args);
        } catch (error) {
          throw await this.missingKey(fn, caller, service, operation, args.input, error);
        }
      },
      { step: 'initialize', name: 'localIamEnforcement', priority: 'high' },
    );
    return client;
  }

  /** S3 answers a GET/HEAD of a missing key with 403 unless the caller may list the bucket. */
  private async missingKey(
    fn: FunctionKey,
    caller: Caller,
    service: string,
    operation: string,
    input: Record<string, unknown>,
    error: unknown,
  ): Promise<unknown> {
    const name = (error as Error).name;
    if (
      service !== 'S3' ||
      (operation !== 'GetObject' && operation !== 'HeadObject') ||
      (name !== 'NoSuchKey' && name !== 'NotFound')
    )
      return error;
    const list: IamRequest = {
      action: 's3:ListBucket',
      resource: `arn:${this.stage.env.partition}:s3:::${String(input.Bucket)}`,
      context: {},
    };
    const result = await this.decide(this.stage.functions[fn], list);
    if (result === 'Allowed') return error;
    this.stats.denied += caller === 'handler' ? 1 : 0;
    this.record({
      fn,
      caller,
      operation: `S3.${operation} of a missing key`,
      action: list.action,
      resource: list.resource,
      result,
    });
    return missingKeyDenied(operation, this.stage.functions[fn].principal, String(input.Key));
  }

  private count(fn: FunctionKey, caller: Caller, denied: boolean): void {
    if (caller === 'handler') {
      this.stats.checked += 1;
      this.stats.byFunction[fn] = (this.stats.byFunction[fn] ?? 0) + 1;
      if (denied) this.stats.denied += 1;
    } else {
      this.stats.eventSourceChecked += 1;
      if (denied) this.stats.eventSourceDenied += 1;
    }
  }

  private record(denial: Denial): void {
    if (this.stats.denials.length < MAX_DENIALS_KEPT) this.stats.denials.push(denial);
  }

  /** Allowed, ImplicitlyDenied or ExplicitlyDenied; memoised per function, action, resource and context. */
  private decide(fn: SynthesizedFunction, request: IamRequest): Promise<string> {
    const key = JSON.stringify([fn.key, request.action, request.resource, request.context]);
    let decision = this.decisions.get(key);
    if (!decision) {
      decision = this.simulate(fn, request);
      this.decisions.set(key, decision);
      // A Map iterates in insertion order: its first key is the oldest decision.
      if (this.decisions.size > MAX_DECISIONS_KEPT) this.decisions.delete(this.decisions.keys().next().value as string);
    }
    return decision;
  }

  private async simulate(fn: SynthesizedFunction, request: IamRequest): Promise<string> {
    const { account } = this.stage.env;
    const simulation: Simulation = {
      identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: p.document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy: this.resourcePolicyOf(request.resource),
      request: {
        action: request.action,
        principal: fn.principal,
        resource: { resource: request.resource, accountId: account },
        // Lambda's SDK calls use TLS; the bucket's and queues' policies deny any request without it.
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': fn.roleArn,
          'aws:PrincipalAccount': account,
          ...request.context,
        },
      },
    } as Simulation;
    const response = await runSimulation(simulation, {});
    if (response.resultType === 'error') {
      throw new Error(
        `the IAM simulation of ${request.action} on ${request.resource} for ${fn.key} is invalid: ${JSON.stringify(response.errors)}`,
      );
    }
    return response.overallResult;
  }

  /** The bucket's policy for an object, the queue's or key's own. */
  private resourcePolicyOf(arn: string) {
    const policies = this.stage.resourcePolicies;
    const bucket = arn.startsWith('arn:') && arn.split(':')[2] === 's3' ? arn.split('/')[0] : undefined;
    return policies[arn] ?? (bucket ? policies[bucket] : undefined);
  }
}
