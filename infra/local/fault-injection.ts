/**
 * Fault injection for the local harness (`npm start -- --faults RATE`, and tests): makes a
 * share of the handlers' AWS SDK calls fail the way AWS calls fail, the model throttle or
 * answer garbage, and whole invocations die part-way. Nothing in the cloud turns it on:
 * it is off until `configureFaults` is called, and only the local harness calls it.
 *
 * The faults, each drawn at `rate` (split evenly between the kinds of a call):
 * - SDK calls (DynamoDB, S3, SQS), per attempt, below the SDK's retry: throttling
 *   (the service's own error name), a 5xx, or a timeout *after the request was sent*
 *   (the write happened, the response was lost: the retry must be safe);
 * - model calls (Bedrock Converse), as Bedrock can answer: throttling; a reply whose tool
 *   input is garbage; `stopReason: "max_tokens"` with the answer cut; `stopReason:
 *   "malformed_tool_use"` (tool calls only); ModelErrorException (424); AccessDeniedException
 *   (403, model access not granted) — see infra/local/converse-protocol.ts for Bedrock's words;
 * - invocations: the handler dies after a random number of SDK calls: every later call
 *   fails and the event source returns the whole batch to the queue, as Lambda does
 *   when a function crashes or times out.
 *
 * Faults are transient, as throttling, 5xx and crashes are: they strike first deliveries
 * only. A redelivered record (SQS `ApproximateReceiveCount` > 1) or a retried schedule
 * invocation runs without them, so every fault is recovered by the retries the design
 * already has — which is what the fault-equivalence test checks: the same final state.
 * A fault that outlasts the retries (a model outage) parks the job in its DLQ; that path
 * is tested with an outage, then `npm run redrive`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface FaultConfig {
  /** Share of calls (and of invocations) that fail, 0–1. */
  rate: number;
  /** Seed of the pseudo-random draws. @default 1 */
  seed?: number;
  /**
   * Sustained mode: from the first model call on, every model call is throttled for this
   * long (real milliseconds; the CLI takes simulated minutes), on every delivery and every
   * attempt — a Bedrock quota exhausted for minutes, as a nightly fan-out to every user meets it.
   */
  modelThrottleMs?: number;
}

export type FaultKind =
  | 'throttling'
  | 'server-error'
  | 'timeout-after-send'
  | 'model-throttling'
  | 'model-throttling-sustained'
  | 'model-garbage'
  | 'model-max-tokens'
  | 'model-malformed-tool-use'
  | 'model-error'
  | 'model-access-denied'
  | 'invocation-died';

type ModelFault = Exclude<Extract<FaultKind, `model-${string}`>, 'model-throttling-sustained'>;
/** The model faults, in the order they are drawn; malformed_tool_use only where a tool was asked for. */
const MODEL_FAULTS: readonly ModelFault[] = [
  'model-throttling',
  'model-garbage',
  'model-max-tokens',
  'model-malformed-tool-use',
  'model-error',
  'model-access-denied',
];

interface Delivery {
  /** Faults may strike this invocation (a first delivery). */
  faulty: boolean;
  /** Dies after this many SDK calls (null: does not die). */
  dieAfter: number | null;
  calls: number;
  died: boolean;
}

let config: Required<FaultConfig> | null = null;
let state = 0;
/** When the sustained throttling began (the first model call), epoch ms. */
let throttleStartedAt: number | null = null;
const counts = new Map<FaultKind, number>();
const deliveries = new AsyncLocalStorage<Delivery>();

/** Turn faults on (rate > 0, or a sustained model throttle) or off (null, or neither) for this process. */
export function configureFaults(next: FaultConfig | null): void {
  const on = next !== null && (next.rate > 0 || (next.modelThrottleMs ?? 0) > 0);
  config = on
    ? { rate: Math.min(1, Math.max(0, next.rate)), seed: next.seed ?? 1, modelThrottleMs: next.modelThrottleMs ?? 0 }
    : null;
  state = config?.seed ?? 0;
  throttleStartedAt = null;
  counts.clear();
}

/** Within the sustained throttle's window (which the first model call opens). */
function sustainedThrottle(): boolean {
  if (!config || config.modelThrottleMs <= 0) return false;
  throttleStartedAt ??= Date.now();
  return Date.now() - throttleStartedAt < config.modelThrottleMs;
}

export const faultsEnabled = (): boolean => config !== null;

/** Faults injected so far, by kind. */
export function faultCounts(): Record<FaultKind, number> {
  const out: Record<FaultKind, number> = {
    throttling: 0,
    'server-error': 0,
    'timeout-after-send': 0,
    'model-throttling': 0,
    'model-throttling-sustained': 0,
    'model-garbage': 0,
    'model-max-tokens': 0,
    'model-malformed-tool-use': 0,
    'model-error': 0,
    'model-access-denied': 0,
    'invocation-died': 0,
  };
  for (const [k, n] of counts) out[k] = n;
  return out;
}

/** mulberry32: a small seeded generator, so a run's draws can be replayed from its seed. */
function random(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

const count = (kind: FaultKind) => counts.set(kind, (counts.get(kind) ?? 0) + 1);

/**
 * Run one invocation. `firstDelivery` false (a redelivery, a retry) runs it without
 * faults. Returns whether the invocation "died": then its outcome must be discarded and
 * its whole batch retried.
 */
export type DeliveryOutcome<T> = { ok: true; result: T; died: boolean } | { ok: false; error: unknown; died: boolean };

export async function withDelivery<T>(firstDelivery: boolean, work: () => Promise<T>): Promise<DeliveryOutcome<T>> {
  const faulty = config !== null && firstDelivery;
  const delivery: Delivery = {
    faulty,
    dieAfter: faulty && random() < (config?.rate ?? 0) ? Math.floor(random() * 8) : null,
    calls: 0,
    died: false,
  };
  try {
    const result = await deliveries.run(delivery, work);
    return { ok: true, result, died: delivery.died };
  } catch (error) {
    return { ok: false, error, died: delivery.died };
  }
}

/** The error a dead invocation's later calls get (not retryable by the SDK). */
export class InvocationDiedError extends Error {
  override readonly name = 'InvocationDied';
  readonly $retryable = undefined;
}

class InjectedServiceError extends Error {
  readonly $fault = 'server';
  readonly $metadata: { httpStatusCode: number; attempts: number; totalRetryDelay: number };
  readonly $retryable?: { throttling: boolean };
  constructor(name: string, status: number, message: string, throttling = false) {
    super(`${message} (injected fault)`);
    this.name = name;
    this.$metadata = { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 };
    if (throttling) this.$retryable = { throttling: true };
  }
}

const THROTTLE: Record<string, { name: string; status: number }> = {
  DynamoDB: { name: 'ThrottlingException', status: 400 },
  S3: { name: 'SlowDown', status: 503 },
  SQS: { name: 'ThrottlingException', status: 400 },
};

type Next = (args: unknown) => Promise<{ output: Record<string, unknown> }>;

/** Add the fault middleware to a client: per attempt (inside the SDK's retry loop). */
export function injectFaults<C extends { middlewareStack: { add: (...args: never[]) => void } }>(
  client: C,
  service: string,
): C {
  const add = client.middlewareStack.add as unknown as (
    mw: unknown,
    options: { step: string; name: string; priority: string },
  ) => void;
  add(
    (next: Next) => async (args: unknown) => {
      // Off (always, in the cloud): one comparison per call, nothing else.
      if (config === null) return next(args);
      if (service === 'BedrockRuntime' && sustainedThrottle()) {
        count('model-throttling-sustained');
        throw new InjectedServiceError(
          'ThrottlingException',
          429,
          'Too many requests, please wait before trying again.',
          true,
        );
      }
      const delivery = deliveries.getStore();
      if (!delivery?.faulty) return next(args);
      delivery.calls += 1;
      if (delivery.died || (delivery.dieAfter !== null && delivery.calls > delivery.dieAfter)) {
        if (!delivery.died) count('invocation-died');
        delivery.died = true;
        throw new InvocationDiedError(`the invocation died before this ${service} call (injected fault)`);
      }
      if (random() >= config.rate) return next(args);
      if (service === 'BedrockRuntime') return modelFault(next, args);
      const throttle = THROTTLE[service] ?? { name: 'ThrottlingException', status: 400 };
      const pick = random();
      if (pick < 1 / 3) {
        count('throttling');
        throw new InjectedServiceError(throttle.name, throttle.status, 'Rate exceeded', true);
      }
      if (pick < 2 / 3) {
        count('server-error');
        throw new InjectedServiceError(
          service === 'S3' ? 'InternalError' : 'InternalServerError',
          500,
          'We encountered an internal error. Please try again.',
        );
      }
      count('timeout-after-send');
      await next(args);
      const timeout = new Error(
        `the ${service} response did not arrive in time (injected fault; the request was sent)`,
      );
      timeout.name = 'TimeoutError';
      throw timeout;
    },
    { step: 'deserialize', name: 'faultInjection', priority: 'high' },
  );
  return client;
}

type ConverseOutput = {
  output?: {
    message?: { content?: Array<{ text?: string; toolUse?: { toolUseId?: string; name?: string; input?: unknown } }> };
  };
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
};

/** One model fault, drawn evenly among those that fit the call, answered as Bedrock would. */
async function modelFault(next: Next, args: unknown): Promise<{ output: Record<string, unknown> }> {
  const input = (
    args as {
      input?: {
        toolConfig?: { tools?: Array<{ toolSpec?: { name?: string } }> };
        outputConfig?: object;
        inferenceConfig?: { maxTokens?: number };
      };
    }
  ).input;
  const askedForTool = input?.toolConfig !== undefined;
  // Structured output (outputConfig) is asked for as JSON text: garbage or a cut answer, no tool call to malform.
  const askedForJson = askedForTool || input?.outputConfig !== undefined;
  const kinds = MODEL_FAULTS.filter((k) => askedForTool || k !== 'model-malformed-tool-use');
  const kind = kinds[Math.min(kinds.length - 1, Math.floor(random() * kinds.length))]!;
  count(kind);
  if (kind === 'model-throttling')
    throw new InjectedServiceError(
      'ThrottlingException',
      429,
      'Too many requests, please wait before trying again.',
      true,
    );
  if (kind === 'model-error')
    throw new InjectedServiceError(
      'ModelErrorException',
      424,
      'The request failed due to an error while processing the model.',
    );
  if (kind === 'model-access-denied')
    throw new InjectedServiceError(
      'AccessDeniedException',
      403,
      "You don't have access to the model with the specified model ID.",
    );
  const result = await next(args);
  const output = result.output as ConverseOutput;
  const message = output.output?.message;
  if (!message) return result;
  const answer = (message.content ?? [])
    .map((c) => c.text ?? (c.toolUse ? JSON.stringify(c.toolUse.input) : ''))
    .join('');
  if (kind === 'model-garbage') {
    // The model answers, but not as asked: prose and a truncated JSON instead of the tool
    // call; nothing at all where a text (a summary) was asked for.
    message.content = askedForJson ? [{ text: 'Sure! Here are the facts: {"new_facts": [{"fact": "unterminated' }] : [];
  } else if (kind === 'model-max-tokens') {
    // Cut at its budget: the first half of the answer, the whole budget spent.
    const maxTokens = input?.inferenceConfig?.maxTokens ?? 1;
    message.content = [{ text: answer.slice(0, Math.floor(answer.length / 2)) }];
    output.stopReason = 'max_tokens';
    output.usage = {
      ...output.usage,
      outputTokens: maxTokens,
      totalTokens: (output.usage?.inputTokens ?? 0) + maxTokens,
    };
  } else {
    const name = input?.toolConfig?.tools?.[0]?.toolSpec?.name ?? 'tool';
    message.content = [
      { toolUse: { toolUseId: 'malformed-1', name, input: answer.slice(0, Math.floor(answer.length / 3)) } },
    ];
    output.stopReason = 'malformed_tool_use';
  }
  return result;
}
