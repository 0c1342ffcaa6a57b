/** The world a fuzz case runs in (bench/fuzz-targets.ts): the victim's memory, the attacker's turns, the storage and rejection checks. */
import type fc from 'fast-check';
import { defaultSignalConfig } from '../lib/signals/signal-weights.js';
import { DEFAULT_SUMMARY_PROMPT, summaryPair } from '../lib/summaries/summary.js';
import { newTierItem } from '../lib/tiers/memory-tiers.js';
import type { ClaimCheckStore } from '../lib/turns/turn.port.js';
import type { IngestDeps, IngestRecord } from '../lib/turns/ingest-deps.js';
import { ingestTurns } from '../lib/turns/ingest-turns.js';
import type { FieldError } from '../lib/kernel/parse-or-keep.js';
import { fixedClock, RecordingLog } from '../lib/kernel/runtime.fake.js';
import {
  ATTACKER,
  brief,
  everyErrorNamesAField,
  isPlainObject,
  type Mutated,
  namesField,
  tryJson,
  VICTIM,
} from '../test/helpers/hostile-input.js';
import { type RecordingWorld, recordingWorld } from '../test/helpers/recording-world.js';

/** A word only the victim's memory holds: no answer to the attacker may contain it. */
export const SECRET = 'quokkazebra';
export const NOW = '2026-02-06T14:30:00.000Z';
export const TURN_TIME = '2026-02-06T14:00:00Z';

export interface CaseResult {
  /** Every property the case broke, in words (empty when the case held). */
  failures: string[];
  /** What happened, counted by kind (accepted, rejected, 400, 403, aborted, …). */
  outcomes: Record<string, number>;
}

export interface FuzzTarget<T = unknown> {
  name: string;
  /** Share of the total cases this target gets. */
  weight: number;
  arbitrary: fc.Arbitrary<T>;
  run(input: T): Promise<CaseResult>;
}

export interface FuzzOptions {
  /** Largest oversized string a case may carry. @default 3 MiB */
  maxBytes?: number;
}

export const count = (outcomes: Record<string, number>, key: string, n = 1) => {
  outcomes[key] = (outcomes[key] ?? 0) + n;
};

export async function guarded(failures: string[], what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const e = error as Error;
    failures.push(
      `${what} threw ${e?.name ?? typeof error}: ${brief(e?.message ?? String(error), 300)} at ${(e?.stack ?? '').split('\n').slice(1, 4).join(' < ')}`,
    );
  }
}

// ── The world a case runs in ───────────────────────────────────────────────────

export const validTurn = (userId: string, turnId: number, query: string, extra: Record<string, unknown> = {}) => ({
  type: 'turn.saved',
  version: 1,
  userId,
  sessionId: 's-1',
  turnId,
  timestamp: TURN_TIME,
  query,
  response: 'Noted, thank you.',
  signals: { validation: 'APPROVE', quality: 0.9 },
  ...extra,
});

export const ingestDepsOf = (
  world: RecordingWorld,
  claims: ClaimCheckStore = {
    fetch: async () => Promise.reject(Object.assign(new Error('no claims here'), { name: 'NoSuchKey' })),
  },
): IngestDeps => ({
  turns: world.turns,
  signalState: world.signalState,
  jobs: world.jobs,
  idle: world.idle,
  claims,
  rejected: world.rejected,
  sources: world.sources,
  settings: world.settings,
  items: world.items,
  clock: fixedClock(NOW),
  log: new RecordingLog(),
  config: defaultSignalConfig,
  redaction: { personalData: false },
  source: 'turn-queue',
  forgets: { latest: async () => null },
});

export const records = (bodies: readonly string[]): IngestRecord[] =>
  bodies.map((body, i) => ({ messageId: `m${i}`, body }));

/** The victim's memory: turns, a Knowledge document, a staged item, a summary, an API item — all holding the secret. */
async function seedVictim(world: RecordingWorld): Promise<void> {
  const lines = [1, 2, 3].map((i) =>
    JSON.stringify(
      validTurn(VICTIM, i, `My private password hint is ${SECRET} number ${i}; remember ${SECRET}.`, {
        attributes: { channel: 'web' },
      }),
    ),
  );
  await ingestTurns(records(lines), ingestDepsOf(world));
  const doc = {
    id: 'Facts/secret.md',
    title: 'secret',
    text: `The password hint is ${SECRET}.`,
    category: 'Facts',
    confidence: 0.95,
    sourceTurns: [1],
    summary: SECRET,
    promotedAt: NOW,
  };
  await world.knowledge.putKnowledge(VICTIM, [{ path: doc.id, markdown: `# secret\n\n${doc.text}`, doc }]);
  await world.knowledge.putStaged(
    VICTIM,
    [
      {
        path: 'Facts/hint--batch-1-3.md',
        kind: 'fact',
        title: 'hint',
        category: 'Facts',
        confidence: 0.6,
        sourceTurns: [1],
        text: SECRET,
        meta: { staged_at: NOW },
        body: SECRET,
        markdown: SECRET,
      },
    ],
    'batch-1-3',
  );
  await world.summaries.write(
    summaryPair({
      userId: VICTIM,
      id: 'summary-1-3',
      kind: 'idle-summary',
      trigger: 'idle',
      createdAt: NOW,
      sourceTurns: [1, 2, 3],
      prompt: DEFAULT_SUMMARY_PROMPT,
      text: `Summary: ${SECRET}.`,
      modelId: 'm',
      inputTokens: 1,
      outputTokens: 1,
      deleted: false,
    }),
  );
  await world.items.create({
    ...newTierItem(VICTIM, 'long_term', { text: `Saved: ${SECRET}`, clientId: 'victim-1' }, new Date(NOW)),
    path: 'memory/long_term/x',
  });
}

/** Everything the fakes hold of the victim, as one string (compared before and after a case). */
function victimState(world: RecordingWorld): string {
  const mine = (k: string) =>
    k.startsWith(`${VICTIM}/`) || k.startsWith(`${VICTIM}#`) || k.startsWith(`${VICTIM}\u0000`);
  const pick = <V>(m: ReadonlyMap<string, V>) => [...m.entries()].filter(([k]) => mine(k));
  return JSON.stringify([
    pick(world.turns.turns),
    world.signalState.items.get(VICTIM) ?? null,
    [...(world.knowledge.docsByUser.get(VICTIM)?.entries() ?? [])],
    pick(world.knowledge.staged),
    pick(world.knowledge.records),
    pick(world.knowledge.knowledgeFiles),
    pick(world.knowledge.outputs),
    pick(world.batchLogs.logs),
    pick(world.summaries.pairs),
    pick(world.items.items),
    world.audit.entries.filter((e) => e.userId === VICTIM),
    world.runs.runs.filter((r) => r.userId === VICTIM),
  ]);
}

/** The most attributes the turn.saved contract allows (50 entries of 4096 characters), different for every turn. */
export const largestAttributes = (turnId: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`attribute_${k}`, `${turnId}:${k}:`.padEnd(4096, 'x')]));

/** A fresh world holding the victim's memory and the attacker's turns; the write log starts empty. */
export async function world(
  attackerTexts: readonly string[] = [],
  options: { largestAttributes?: boolean } = {},
): Promise<{ world: RecordingWorld; victimBefore: string }> {
  const w = recordingWorld();
  await seedVictim(w);
  if (attackerTexts.length > 0) {
    const attributes = (t: string, turnId: number) =>
      options.largestAttributes ? largestAttributes(turnId) : { channel: 'web', hostile: t.slice(0, 4000) };
    const lines = attackerTexts.map((t, i) =>
      JSON.stringify(validTurn(ATTACKER, i + 1, t.length > 0 ? t : 'empty', { attributes: attributes(t, i + 1) })),
    );
    await ingestTurns(records(lines), ingestDepsOf(w));
  }
  w.writes.writes.length = 0;
  return { world: w, victimBefore: victimState(w) };
}

export function storageProblems(w: RecordingWorld, allowed: ReadonlySet<string>, victimBefore: string): string[] {
  const out = w.writes.problems(allowed);
  if (!allowed.has(VICTIM) && victimState(w) !== victimBefore) out.push('the victim’s memory changed');
  return out;
}

const DISCRIMINATORS = new Set(['turn.saved', 'session.closed', 'agent.event']);

/**
 * Rejected records must name their fields; when a changed field made the record fail, that
 * field must be among them (any of `changes`: a claim check and the payload it points at
 * are changed independently).
 */
export function rejectionProblems(
  errors: readonly FieldError[],
  body: string,
  changes: ReadonlyArray<Mutated | null>,
  where = '',
): string[] {
  const out = everyErrorNamesAField(errors, isPlainObject(tryJson(body))).map((p) => `${where}${p}`);
  const known = changes.filter((m): m is Mutated => m !== null);
  if (known.length === 0 || known.length < changes.length) return out;
  if (known.every((m) => m.kind === 'valid')) return [...out, `${where}a valid value was rejected: ${brief(errors)}`];
  const named = known.filter((m) => m.kind !== 'valid' && m.kind !== 'add');
  // A turn turned into another event type fails on that type's own fields.
  const retyped = named.some((m) => {
    const type = isPlainObject(m.value) ? m.value.type : undefined;
    return m.field === 'type' && typeof type === 'string' && DISCRIMINATORS.has(type);
  });
  // A claim check without its payloadRef is read as a turn, and fails on the turn's own fields.
  const alsoNamed = (m: Mutated) => (m.field === 'payloadRef' && m.kind === 'remove' ? ['query', 'response'] : []);
  if (
    named.length > 0 &&
    !retyped &&
    !named.some((m) => [m.field, ...alsoNamed(m)].some((f) => namesField(errors, f)))
  ) {
    out.push(
      `${where}${named.map((m) => `${m.kind} of ${JSON.stringify(m.field)}`).join(' and ')} rejected without naming it: ${brief(errors, 300)}`,
    );
  }
  return out;
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
