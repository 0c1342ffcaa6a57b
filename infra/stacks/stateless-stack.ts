import { fileURLToPath } from 'node:url';
import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FUNCTION_SPECS } from '../constructs/function-specs.js';
import { functionEventSource, grantPermissions } from '../constructs/function-grants.js';
import { memoryApi } from '../constructs/memory-api.js';
import { MemoryFunction } from '../constructs/memory-function.js';
import { costAlarm, functionAlarms, rejectedRecordsAlarm, staleIndexAlarm } from '../constructs/stage-alarms.js';
import { batchKindsOn, sleepTimeBatchInference } from '../constructs/sleep-time-batch.js';
import { sweepSchedules } from '../constructs/sweep-schedules.js';
import { type FunctionKey, PERMISSIONS, type Permissions } from '../permissions.js';
import { FUNCTION_TIMEOUT_SECONDS } from '../resources.js';
import type { RecursiveLoops, StatelessStackProps } from './stateless-props.js';

export type { RecursiveLoops, StatelessStackProps } from './stateless-props.js';

/**
 * Functions that send to the queue that invokes them, allowed to: Lambda stops an SQS → function
 * → same queue chain once the function has been invoked 16 times in it (recursive loop
 * detection, on by default: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
 * The idle check puts itself back on the IdleQueue while it must wait longer than SQS's 900-s
 * delay allows (a user's threshold of up to a day, lib/settings/user-settings.ts) and while the
 * user keeps talking (lib/signals/check-idle.ts): a threshold over 4 hours takes more than 16
 * hops. The guard Lambda's detection stood for is the idle rule's own: one pending check per
 * user, which stops as superseded once a newer check is sent and stops for good when it
 * summarises or finds nothing to do, so no check loops without a user's turn having sent it
 * within a threshold (at most 96 hops of 15 minutes). The reflector continues a large forget
 * in a fresh job on the job queue (lib/forget/forget-user.ts): a user of many items
 * takes more than 16; its guard is that a job which erased nothing does not continue, and the
 * forget's items only decrease. The test in test/infra/recursive-loops.test.ts derives from the
 * templates which functions send to their own queue.
 */
export const RECURSIVE_LOOPS: RecursiveLoops = { idle: 'Allow', reflector: 'Allow' };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const entry = (name: string) => `${ROOT}functions/${name}/handler.ts`;

const recursiveLoop = (setting: 'Allow' | 'Terminate' | undefined): { recursiveLoop?: RecursiveLoop } =>
  setting === undefined ? {} : { recursiveLoop: setting === 'Allow' ? RecursiveLoop.ALLOW : RecursiveLoop.TERMINATE };

/** Functions, their event sources, grants and schedules, and the memory API. */
export class StatelessStack extends Stack {
  readonly signalFn: MemoryFunction;
  readonly reflectorFn: MemoryFunction;
  readonly idleFn: MemoryFunction;
  readonly sweepFn: MemoryFunction;
  readonly apiFn: MemoryFunction;
  readonly api: HttpApi;
  /** Where EventBridge puts a sweep event it could not deliver to the sweep function. */
  readonly sweepDlq: Queue;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const permissions = props.permissions ?? PERMISSIONS;
    this.signalFn = this.memoryFunction('signal', permissions.signal, props);
    this.idleFn = this.memoryFunction('idle', permissions.idle, props);
    this.reflectorFn = this.memoryFunction('reflector', permissions.reflector, props);
    this.sweepFn = this.memoryFunction('sweep', permissions.sweep, props);
    this.sweepDlq = sweepSchedules(this, props, this.sweepFn);
    if (permissions.sweep.batchInference && batchKindsOn(props.config).length > 0)
      sleepTimeBatchInference(this, props, { sweep: this.sweepFn, reflector: this.reflectorFn }, this.sweepDlq);
    this.apiFn = this.memoryFunction('api', permissions.api, props);

    this.api = memoryApi(this, props, this.apiFn);
    functionAlarms(this, props, { Sweep: this.sweepFn, Api: this.apiFn });
    costAlarm(this, props);
    rejectedRecordsAlarm(this, props);
    staleIndexAlarm(this, props, this.apiFn);
    new CfnOutput(this, 'ApiUrl', {
      value: this.api.apiEndpoint,
      description: 'Memory API base URL: /v1/* needs a bearer JWT; /openapi.json and /console are public',
    });
  }

  /** One memory function as FUNCTION_SPECS describes it: its event source, if any, and its grants. */
  private memoryFunction(key: FunctionKey, permissions: Permissions, props: StatelessStackProps): MemoryFunction {
    const spec = FUNCTION_SPECS[key](this, props);
    const fn = new MemoryFunction(this, spec.id, {
      tracing: spec.tracing,
      entry: entry(key),
      projectRoot: ROOT,
      description: spec.description,
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS[key],
      memorySize: props.config.memoryMb[key],
      environment: spec.environment,
      assets: spec.assets,
      ...recursiveLoop((props.recursiveLoops ?? RECURSIVE_LOOPS)[key]),
    });
    if (spec.source) fn.addEventSource(functionEventSource(this, permissions, props, spec.source));
    grantPermissions(this, fn, permissions, props);
    return fn;
  }
}
