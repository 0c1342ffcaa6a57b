/**
 * The smoke run: first a pre-flight of the stage's models (preflight.ts: each answers one
 * tiny call and is Active), then publish a short conversation for a fresh user through the public publisher
 * (SqsTurnPublisher, as agents do), then check through the memory API and SQS that it landed —
 * turns indexed, a batch reflected by the model, a session-close summary written, search
 * answering, every dead-letter queue empty — and say, for each check, ok or FAILED with the
 * cause and where to look. The same function runs against a deployed stage and the local
 * stack; only the target differs (target.ts).
 */
import { randomBytes } from 'node:crypto';
import { SqsTurnPublisher } from '../../lib/turns/sqs-turn-publisher.adapter.js';
import { QUEUES, type QueueKey } from '../resources.js';
import { userApi } from './api-client.js';
import { type SmokeConversation, smokeConversation } from './conversation.js';
import {
  batchReflected,
  failureReasons,
  type ProbeContext,
  type ProbeResult,
  queueDepth,
  searchAnswers,
  summaryWritten,
  turnsIndexed,
} from './probes.js';
import { preflight } from './preflight.js';
import { CONSUMER, type SmokeCheck, type SmokeTarget } from './target.js';

export type { SmokeCheck } from './target.js';

export interface SmokeReport {
  ok: boolean;
  target: string;
  userId: string;
  durationMs: number;
  checks: SmokeCheck[];
}

export interface SmokeOptions {
  /** The user to publish for. Default: a fresh `smoke-…` id, so every run starts empty. */
  userId?: string;
  /** How long to wait for the pipeline. @default 300 000 ms */
  timeoutMs?: number;
  /** Pause between polls of the API. @default 3 000 ms */
  pollMs?: number;
  /** Fail the batch check unless this model id answered. */
  expectedModelId?: string;
  /** Progress while waiting (the CLI prints it on stderr). */
  onProgress?: (message: string) => void;
}

/** A user id no earlier run used: lower case (Cognito may fold case), within the contract's `[A-Za-z0-9._:@-]{1,128}`. */
export function freshSmokeUserId(now: Date): string {
  return `smoke-${now.toISOString().replace(/\D/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

const PROBES = ['turnsIndexed', 'batchReflected', 'summaryWritten', 'searchAnswers'] as const;
type ProbeId = (typeof PROBES)[number];
const TITLES = {
  token: 'API token',
  published: 'conversation published',
  turnsIndexed: 'turns indexed',
  batchReflected: 'batch reflected by the model',
  summaryWritten: 'session summary written',
  searchAnswers: 'search answers',
} as const satisfies Record<ProbeId | 'token' | 'published', string>;
const dlqCheckId = (key: QueueKey) => `${key}DlqEmpty`;

export async function runSmoke(target: SmokeTarget, options: SmokeOptions = {}): Promise<SmokeReport> {
  const started = Date.now();
  const now = new Date();
  const chosen = target.auth.fixedUserId ?? options.userId;
  const userId = chosen ?? freshSmokeUserId(now);
  // A fresh user starts at turn 1; a user who may have turns already gets ids above any
  // earlier run's (turn ids must increase per user), from the clock.
  const conversation = smokeConversation(userId, now, chosen === undefined ? 1 : Math.floor(now.getTime() / 1000));
  const checks: SmokeCheck[] = [];
  try {
    // Nothing is published for a stage whose models it could not use (preflight.ts).
    const models = await preflight(target.models);
    checks.push(...models);
    const token = models.every((c) => c.ok) ? await obtainToken(target, userId, checks) : undefined;
    if (token === undefined)
      checks.push(
        ...notRun(
          ['token', 'published', ...PROBES],
          'a model of the stage failed the pre-flight (see the model checks)',
        ),
      );
    else if (token === null)
      checks.push(...notRun(['published', ...PROBES], 'no token for the API (see the token check)'));
    else await exercise(target, conversation, token, options, checks);
    checks.push(...(await deadLetterChecks(target)));
  } finally {
    const removed = await cleanup(target);
    if (removed) checks.push(removed);
  }
  return { ok: checks.every((c) => c.ok), target: target.label, userId, durationMs: Date.now() - started, checks };
}

async function obtainToken(target: SmokeTarget, userId: string, checks: SmokeCheck[]): Promise<string | null> {
  try {
    const { token, detail } = await target.auth.token(userId);
    checks.push({ id: 'token', title: TITLES.token, ok: true, detail });
    return token;
  } catch (error) {
    checks.push({
      id: 'token',
      title: TITLES.token,
      ok: false,
      detail: `no token for ${userId}`,
      cause: `${(error as Error).name}: ${(error as Error).message}`,
      lookAt:
        "the stage's Cognito user pool and app client (USER_PASSWORD_AUTH allowed), the caller's cognito-idp permissions, or --token for a stage with its own OIDC issuer",
    });
    return null;
  }
}

async function cleanup(target: SmokeTarget): Promise<SmokeCheck | null> {
  try {
    const removed = await target.auth.cleanup();
    return removed === null ? null : { id: 'cleanup', title: 'smoke credentials removed', ok: true, detail: removed };
  } catch (error) {
    return {
      id: 'cleanup',
      title: 'smoke credentials removed',
      ok: false,
      detail: 'the smoke user could not be removed from the identity provider',
      cause: `${(error as Error).name}: ${(error as Error).message}`,
      lookAt: 'delete the smoke-… user in the Cognito console (cognito-idp:AdminDeleteUser)',
    };
  }
}

function notRun(ids: ReadonlyArray<keyof typeof TITLES>, why: string): SmokeCheck[] {
  return ids.map((id) => ({ id, title: TITLES[id], ok: false, detail: 'not run', cause: why }));
}

/**
 * Publishes as agents do: turns in batches of up to 10, the last turn as a claim check
 * (written to `claims/` in the bucket, so the signal function's claim-check path runs too),
 * then the session's close.
 */
async function publish(target: SmokeTarget, conversation: SmokeConversation): Promise<SmokeCheck> {
  const claims = { s3: target.s3, bucketName: target.bucketName };
  const publisher = new SqsTurnPublisher(target.sqs, target.queues.turn.url, claims);
  const claimPublisher = new SqsTurnPublisher(target.sqs, target.queues.turn.url, { ...claims, thresholdBytes: 0 });
  const base = { id: 'published', title: TITLES.published };
  const lookAt = `${target.queues.turn.name}; the caller needs sqs:SendMessage on it, s3:PutObject on claims/* and kms:GenerateDataKey + kms:Decrypt on the stage's data key (DataKeyArn)`;
  try {
    const results = [
      await publisher.publish(conversation.turns.slice(0, -1)),
      await claimPublisher.publish(conversation.turns.slice(-1)),
      await publisher.publish([conversation.close]),
    ];
    const sent = results.reduce((n, r) => n + r.sent, 0);
    const failed = results.flatMap((r) => r.failed);
    const detail = `${sent} events sent to ${target.queues.turn.name} for ${conversation.userId} (${conversation.turns.length} turns, 1 of them as a claim check, and session.closed)`;
    if (failed.length === 0) return { ...base, ok: true, detail };
    return {
      ...base,
      ok: false,
      detail,
      cause: `SQS refused ${failed.length}: ${failed.map((f) => `${f.code} ${f.message}`).join('; ')}`,
      lookAt,
    };
  } catch (error) {
    return {
      ...base,
      ok: false,
      detail: 'publishing failed',
      cause: `${(error as Error).name}: ${(error as Error).message}`,
      lookAt,
    };
  }
}

async function exercise(
  target: SmokeTarget,
  conversation: SmokeConversation,
  token: string,
  options: SmokeOptions,
  checks: SmokeCheck[],
): Promise<void> {
  // Without it (no sqs:GetQueueAttributes), the run waits for its deadline instead of
  // stopping early; the dead-letter checks then say why.
  const baseline = await dlqTotals(target).catch(() => null);
  const published = await publish(target, conversation);
  checks.push(published);
  if (!published.ok) {
    checks.push(...notRun(PROBES, 'the conversation was not published'));
    return;
  }
  const ctx: ProbeContext = {
    api: userApi(target.apiUrl, conversation.userId, token),
    conversation,
    expectedModelId: options.expectedModelId,
  };
  const { results, stopped } = await pollProbes(target, ctx, baseline, options);
  const failing = PROBES.filter((id) => !results[id].ok);
  const cause = failing.length > 0 ? await waitingCause(target, conversation.userId, stopped, failing) : '';
  for (const id of PROBES) {
    const r = results[id];
    checks.push({
      id,
      title: TITLES[id],
      ok: r.ok,
      detail: r.detail,
      ...(r.ok ? {} : { cause, lookAt: lookAtFor(target, id) }),
    });
  }
}

/** Poll every probe that has not passed (nor failed for good) until none is left, the deadline comes, or a dead-letter queue grows. */
async function pollProbes(
  target: SmokeTarget,
  ctx: ProbeContext,
  baseline: Record<QueueKey, number> | null,
  options: SmokeOptions,
) {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 300_000;
  const pending = new Set(ctx.conversation.turns.map((t) => t.turnId));
  const run: Record<ProbeId, () => Promise<ProbeResult>> = {
    turnsIndexed: () => turnsIndexed(ctx, pending),
    batchReflected: () => batchReflected(ctx),
    summaryWritten: () => summaryWritten(ctx),
    searchAnswers: () => searchAnswers(ctx),
  };
  const results = Object.fromEntries(PROBES.map((id) => [id, { ok: false, detail: 'not checked yet' }])) as Record<
    ProbeId,
    ProbeResult
  >;
  for (;;) {
    for (const id of PROBES) {
      if (results[id].ok || results[id].final) continue;
      results[id] = await run[id]().catch((error: Error) => ({ ok: false, detail: `${error.name}: ${error.message}` }));
      if (results[id].ok)
        options.onProgress?.(`ok after ${Math.round((Date.now() - started) / 1000)} s: ${TITLES[id]}`);
    }
    if (PROBES.every((id) => results[id].ok || results[id].final)) return { results, stopped: '' };
    if (Date.now() - started >= timeoutMs)
      return { results, stopped: `not there ${Math.round(timeoutMs / 1000)} s after publishing` };
    const grown = baseline === null ? null : await dlqGrowth(target, baseline);
    if (grown) return { results, stopped: `stopped waiting: ${grown}` };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 3_000));
  }
}

/** What the queues and the reflector's failure logs say, for a check that did not pass. */
async function waitingCause(
  target: SmokeTarget,
  userId: string,
  stopped: string,
  failing: readonly ProbeId[],
): Promise<string> {
  const parts = [stopped];
  for (const key of ['turn', 'job'] as const) {
    const d = await queueDepth(target, target.queues[key].url).catch(() => null);
    if (d && d.waiting + d.inFlight > 0) {
      const retry =
        d.inFlight > 0
          ? ` (a failed message comes back after the ${QUEUES[key].visibilityTimeoutSeconds} s visibility timeout)`
          : '';
      parts.push(`${target.queues[key].name} holds ${d.waiting} waiting, ${d.inFlight} in flight${retry}`);
    }
  }
  if (failing.includes('batchReflected') || failing.includes('summaryWritten')) {
    const reasons = await failureReasons(target, userId);
    if (reasons.length > 0) parts.push(`reflector failure logs: ${reasons.join('; ')}`);
  }
  return parts.filter(Boolean).join('; ');
}

function lookAtFor(target: SmokeTarget, id: ProbeId): string {
  const { logs, queues } = target;
  switch (id) {
    case 'turnsIndexed':
      return `signal function logs ${logs.signal}; ${queues.turn.dlqName}`;
    case 'batchReflected':
      return `reflector function logs ${logs.reflector}; ${queues.job.dlqName}; Bedrock model access and the stage's modelId (infra/config/stages.ts)`;
    case 'summaryWritten':
      return `reflector function logs ${logs.reflector}; ${queues.job.dlqName}; the stage's summaries setting (infra/config/stages.ts)`;
    case 'searchAnswers':
      return `api function logs ${logs.api}`;
  }
}

async function dlqTotals(target: SmokeTarget): Promise<Record<QueueKey, number>> {
  const keys = Object.keys(target.queues) as QueueKey[];
  const depths = await Promise.all(
    keys.map(async (k) => {
      const d = await queueDepth(target, target.queues[k].dlqUrl);
      return [k, d.waiting + d.inFlight + d.delayed] as const;
    }),
  );
  return Object.fromEntries(depths) as Record<QueueKey, number>;
}

async function dlqGrowth(target: SmokeTarget, baseline: Record<QueueKey, number>): Promise<string | null> {
  const now = await dlqTotals(target).catch(() => baseline);
  const grown = (Object.keys(now) as QueueKey[]).filter((k) => now[k] > baseline[k]);
  return grown.length === 0
    ? null
    : grown
        .map((k) => `${target.queues[k].dlqName} received ${now[k] - baseline[k]} message(s) during the run`)
        .join('; ');
}

/** Every dead-letter queue empty (messages waiting and in flight), whoever parked them. */
async function deadLetterChecks(target: SmokeTarget): Promise<SmokeCheck[]> {
  const keys = Object.keys(target.queues) as QueueKey[];
  return Promise.all(
    keys.map(async (key): Promise<SmokeCheck> => {
      const q = target.queues[key];
      const base = { id: dlqCheckId(key), title: `${q.dlqName} empty` };
      try {
        const d = await queueDepth(target, q.dlqUrl);
        const held = d.waiting + d.inFlight + d.delayed;
        if (held === 0) return { ...base, ok: true, detail: '0 messages' };
        return {
          ...base,
          ok: false,
          detail: `${held} message(s): ${d.waiting} waiting, ${d.inFlight} in flight`,
          cause: `the ${CONSUMER[key]} function gave up on ${held} message(s) of ${q.name} (not necessarily this run's)`,
          lookAt: `${q.dlqName} (SQS console: poll for messages; after fixing the cause, Start DLQ redrive); ${CONSUMER[key]} function logs ${target.logs[CONSUMER[key]]}`,
        };
      } catch (error) {
        return {
          ...base,
          ok: false,
          detail: 'could not read its attributes',
          cause: `${(error as Error).name}: ${(error as Error).message}`,
          lookAt: `the caller's sqs:GetQueueAttributes on ${q.dlqName}`,
        };
      }
    }),
  );
}

/** One line per check: `ok      title — detail`, or `FAILED  title — detail; cause: …; look at: …`. */
export function formatCheck(check: SmokeCheck): string {
  const head = `${check.ok ? 'ok    ' : 'FAILED'}  ${check.title} — ${check.detail}`;
  if (check.ok) return head;
  return `${head}${check.cause ? `; cause: ${check.cause}` : ''}${check.lookAt ? `; look at: ${check.lookAt}` : ''}`;
}

/** The last line: one JSON object with every check's result (the project's convention for commands). */
export function reportJson(report: SmokeReport): string {
  const checks = Object.fromEntries(
    report.checks.map((c) => [
      c.id,
      { ok: c.ok, detail: c.detail, ...(c.cause ? { cause: c.cause } : {}), ...(c.lookAt ? { lookAt: c.lookAt } : {}) },
    ]),
  );
  return JSON.stringify({
    ok: report.ok,
    target: report.target,
    userId: report.userId,
    durationMs: report.durationMs,
    passed: report.checks.filter((c) => c.ok).length,
    failed: report.checks.filter((c) => !c.ok).length,
    checks,
  });
}
