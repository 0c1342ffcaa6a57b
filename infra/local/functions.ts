/**
 * The five functions as the local harness runs them: each built by its handler factory
 * (functions/<name>/create-handler.ts) — the code the Lambda entry builds at cold start —
 * with the environment the synthesized stack gives it, parsed by the function's own
 * schema (functions/<name>/env.ts), its local clients and the simulated clock. The one
 * value that differs locally is overridden here, and only here. The model id is the
 * stage's own (the inference profile of the local Region): the local Converse endpoint
 * answers it with the offline model, checking the request as Bedrock checks it for that
 * model, and the IAM check evaluates it against the reflector's real grant.
 */
import { createApiHandler, type ApiHandler } from '../../functions/api/create-handler.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { createIdleHandler, type IdleHandler } from '../../functions/idle/create-handler.js';
import { IdleEnvSchema } from '../../functions/idle/env.js';
import { createReflectorHandler, type ReflectorHandler } from '../../functions/reflector/create-handler.js';
import { ReflectorEnvSchema } from '../../functions/reflector/env.js';
import { createSignalHandler, type SignalHandler } from '../../functions/signal/create-handler.js';
import { SignalEnvSchema } from '../../functions/signal/env.js';
import { createSweepHandler, type SweepHandler } from '../../functions/sweep/create-handler.js';
import { SweepEnvSchema } from '../../functions/sweep/env.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import type { Clock } from '../../lib/kernel/runtime.port.js';
import type { FunctionKey } from '../permissions.js';
import type { StandInHttpHandler } from './batch-inference-stand-in.js';
import { functionClients } from './clients.js';
import type { IamEnforcer } from './iam/iam-enforcement.js';
import type { SynthesizedStage } from './iam/synthesized-stage.js';

export interface LocalFunctions {
  signal: SignalHandler;
  idle: IdleHandler;
  reflector: ReflectorHandler;
  sweep: SweepHandler;
  api: ApiHandler;
}

export interface LocalOverrides {
  /** Local delays run this many times faster: the idle threshold's time scale. */
  speed: number;
  /** A test's own variables, set last (HarnessOptions.environment). */
  environment?: Partial<Record<FunctionKey, Record<string, string>>>;
}

/** A function's environment on the local harness: the synthesized one with the local overrides. */
export function functionEnvironment(
  stage: SynthesizedStage,
  fn: FunctionKey,
  overrides: LocalOverrides,
): Record<string, string> {
  const env = { ...stage.functions[fn].environment };
  // The idle threshold (the stage's, or a user's own) runs out `speed` times faster.
  if (env.SIGNAL_CONFIG !== undefined)
    env.SIGNAL_CONFIG = JSON.stringify({ ...JSON.parse(env.SIGNAL_CONFIG || '{}'), timeScale: overrides.speed });
  // The model retry's 30 s, sped up like the other delays (SQS counts whole seconds: at least 1).
  if (env.MODEL_RETRY_DELAY_SECONDS !== undefined)
    env.MODEL_RETRY_DELAY_SECONDS = String(
      Math.max(1, Math.round(Number(env.MODEL_RETRY_DELAY_SECONDS) / overrides.speed)),
    );
  // The forget's wait for the user's in-flight writes, sped up the same way (the local functions finish in well under a second).
  if (env.FORGET_SETTLE_SECONDS !== undefined)
    env.FORGET_SETTLE_SECONDS = String(Math.round(Number(env.FORGET_SETTLE_SECONDS) / overrides.speed));
  // L of the search index's watermark: the local functions' writes land within their call.
  if (fn === 'api' || fn === 'reflector') env.SEARCH_MARK_LAG_SECONDS = '5';
  return { ...env, ...overrides.environment?.[fn] };
}

export function buildLocalFunctions(
  stage: SynthesizedStage,
  clock: Clock,
  iam: IamEnforcer | null,
  overrides: LocalOverrides,
  /** Bedrock's control plane for the sweep's batch inference jobs (batch-inference-stand-in.ts). */
  batchInference?: StandInHttpHandler,
): LocalFunctions {
  const env = (fn: FunctionKey) => functionEnvironment(stage, fn, overrides);
  return {
    signal: createSignalHandler(parseEnv(SignalEnvSchema, env('signal')), functionClients('signal', iam), clock),
    idle: createIdleHandler(parseEnv(IdleEnvSchema, env('idle')), functionClients('idle', iam), clock),
    reflector: createReflectorHandler(
      parseEnv(ReflectorEnvSchema, env('reflector')),
      functionClients('reflector', iam),
      clock,
    ),
    sweep: createSweepHandler(
      parseEnv(SweepEnvSchema, env('sweep')),
      functionClients('sweep', iam, batchInference),
      clock,
    ),
    api: createApiHandler(parseEnv(ApiEnvSchema, env('api')), functionClients('api', iam), clock),
  };
}
