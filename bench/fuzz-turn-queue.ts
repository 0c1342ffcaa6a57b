/** Fuzz targets of the turn queue (signal function): turn.saved, claim checks, session.closed, agent.event. */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { JobSchema } from '../events/job.js';
import { S3ClaimCheckStore } from '../lib/turns/s3-claim-check-store.adapter.js';
import type { ClaimCheckStore } from '../lib/turns/turn.port.js';
import { ingestTurns } from '../lib/turns/ingest-turns.js';
import {
  ATTACKER,
  arbitraryBody,
  brief,
  hostileString,
  hostileValue,
  isPlainObject,
  type Mutated,
  mutate,
  pathLike,
  tryJson,
  VICTIM,
} from '../test/helpers/hostile-input.js';
import type { RecordingWorld } from '../test/helpers/recording-world.js';
import {
  type CaseResult,
  count,
  type FuzzOptions,
  type FuzzTarget,
  guarded,
  ingestDepsOf,
  records,
  rejectionProblems,
  SECRET,
  storageProblems,
  TURN_TIME,
  validTurn,
  world,
} from './fuzz-world.js';

interface QueueCase {
  /** Each record's body and the changes made to get it (none: arbitrary input). */
  bodies: Array<{ body: string; mutation: Mutated | null; payload?: Mutated }>;
}

const asBody = (m: fc.Arbitrary<Mutated>): fc.Arbitrary<{ body: string; mutation: Mutated | null }> =>
  m.map((mutation) => ({ body: JSON.stringify(mutation.value) ?? 'null', mutation }));

/** A valid event's JSON with one field replaced by nesting deeper than JSON.stringify can go (but JSON.parse can). */
const deepTextBody = (valid: Record<string, unknown>): fc.Arbitrary<{ body: string; mutation: Mutated | null }> =>
  fc
    .record({
      field: fc.constantFrom(...Object.keys(valid), 'extra'),
      depth: fc.integer({ min: 5_000, max: 100_000 }),
      array: fc.boolean(),
    })
    .map(({ field, depth, array }) => ({
      body: `${JSON.stringify(valid).slice(0, -1)},${JSON.stringify(field)}:${array ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`}}`,
      mutation: { value: null, kind: field === 'extra' ? 'add' : 'replace', field },
    }));

function queueCase(
  valid: Record<string, unknown>,
  o: FuzzOptions & { fields?: string[]; nested?: Record<string, fc.Arbitrary<unknown>> },
): fc.Arbitrary<QueueCase> {
  const one = fc.oneof(
    { weight: 12, arbitrary: asBody(mutate(valid, o)) },
    { weight: 2, arbitrary: arbitraryBody(o).map((body) => ({ body, mutation: null })) },
    { weight: 1, arbitrary: deepTextBody(valid) },
  );
  return fc.record({ bodies: fc.array(one, { minLength: 1, maxLength: 5 }) });
}

const signalsArb = (o: FuzzOptions) =>
  mutate({ validation: 'APPROVE', quality: 0.9, route: 'answer', contradiction: false }, o).map((m) => m.value);
/** Sources (req R-SRC): valid ones, one field changed, and host names that are not. */
const sourcesArb = (o: FuzzOptions) =>
  fc.oneof(
    fc.array(
      mutate({ domain: 'docs.example.com', outcome: 'success', extractionQuality: 0.8 }, o).map((m) => m.value),
      { maxLength: 25 },
    ),
    fc.array(
      fc.record({
        domain: fc.oneof(
          pathLike(VICTIM),
          hostileString({ ...o, maxBytes: 0 }),
          fc.constantFrom('www.example.com', 'EXAMPLE.COM', 'a..b', '-x.example', `${'x'.repeat(64)}.com`),
        ),
        outcome: fc.constantFrom('success', 'blocked', 'failed'),
      }),
      { maxLength: 5 },
    ),
  );
/** Episodes (req R-EPI): one field changed, hostile params and capability names. */
const episodeArb = (o: FuzzOptions) =>
  mutate(
    {
      goal: 'Order fish food',
      plan: ['search', 'order'],
      actions: [{ capability: 'shop.order', params: { qty: 1 }, result: 'ordered', confidence: 0.9, success: true }],
      outcome: { success: true, durationMs: 1200 },
    },
    {
      ...o,
      nested: {
        actions: fc.array(
          fc.record({
            capability: fc.oneof(fc.constant('web.search'), pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 })),
            params: hostileValue({ ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 128 * 1024) }),
          }),
          { maxLength: 4 },
        ),
      },
    },
  ).map((m) => m.value);

const attributesArb = (o: FuzzOptions) =>
  fc.oneof(
    mutate({ channel: 'web', dia_ids: 'D1:1 D1:2' }, o).map((m) => m.value),
    fc.dictionary(hostileString({ ...o, maxBytes: 0 }), hostileString({ ...o, maxBytes: 0 }), { maxKeys: 60 }),
    // Up to the contract's limits (and one past them), in characters of one to three UTF-8 bytes.
    fc
      .record({ n: fc.integer({ min: 1, max: 51 }), unit: fc.constantFrom('v', 'é', '中', '😀') })
      .map(({ n, unit }) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, unit.repeat(4096 / unit.length)])),
      ),
  );

/** Runs a batch of TurnQueue records through ingestion and checks every property. */
async function runIngest(
  c: QueueCase,
  claims?: (w: RecordingWorld) => ClaimCheckStore & { reads?: string[] },
): Promise<CaseResult> {
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  const { world: w, victimBefore } = await world();
  const claimStore = claims?.(w);
  const deps = ingestDepsOf(w, claimStore);
  const bodies = c.bodies.map((b) => b.body);
  let r: Awaited<ReturnType<typeof ingestTurns>> | undefined;
  await guarded(failures, 'ingestTurns', async () => {
    r = await ingestTurns(records(bodies), deps);
  });
  if (r) {
    count(outcomes, 'records', bodies.length);
    count(outcomes, 'accepted', r.accepted);
    count(outcomes, 'duplicates', r.duplicates);
    count(outcomes, 'controlEvents', r.controlEvents);
    count(outcomes, 'rejected', r.rejected);
    if (r.failedMessageIds.length > 0)
      failures.push(`records went back to the queue (nothing here is transient): ${r.failedMessageIds.join(', ')}`);
    if (
      r.accepted +
        r.duplicates +
        r.late +
        r.controlEvents +
        r.alreadyApplied +
        r.rejected +
        r.failedMessageIds.length !==
      bodies.length
    )
      failures.push('records unaccounted for');
    if (w.rejected.kept.length !== r.rejected)
      failures.push(`${r.rejected} rejected but ${w.rejected.kept.length} kept`);
    for (const kept of w.rejected.kept) {
      const i = Number(kept.messageId.slice(1));
      if (kept.body !== bodies[i]) failures.push(`rejected record ${kept.messageId} was not kept as it came`);
      const b = c.bodies[i];
      failures.push(
        ...rejectionProblems(
          kept.errors,
          kept.body,
          [b?.mutation ?? null, ...(b?.payload ? [b.payload] : [])],
          `${kept.messageId}: `,
        ),
      );
    }
  }
  // Who the records speak for: writes for anybody else are out of bounds.
  const named = new Set(
    bodies
      .map((b) => tryJson(b))
      .filter(isPlainObject)
      .map((v) => v.userId)
      .filter((u): u is string => typeof u === 'string'),
  );
  failures.push(...storageProblems(w, named, victimBefore));
  if (claimStore?.reads)
    for (const key of claimStore.reads)
      if (!key.startsWith('claims/')) failures.push(`a claim check read ${JSON.stringify(key)} outside claims/`);
  for (const job of w.jobs.jobs) {
    const parsed = JobSchema.safeParse(job);
    if (!parsed.success)
      failures.push(`an enqueued job does not parse on the job queue: ${brief(parsed.error.issues)}`);
  }
  return { failures, outcomes };
}

/** An S3 client that only answers GetObject, from a map, recording each key read. */
class ClaimBucket {
  readonly reads: string[] = [];
  constructor(readonly objects: Map<string, string>) {}
  async send(command: unknown): Promise<unknown> {
    if (!(command instanceof GetObjectCommand))
      throw new Error(`unexpected S3 command ${(command as object)?.constructor?.name}`);
    const key = String(command.input.Key);
    this.reads.push(key);
    const body = this.objects.get(key);
    if (body === undefined) throw Object.assign(new Error(`NoSuchKey ${key}`), { name: 'NoSuchKey' });
    return { Body: { transformToString: async () => body } };
  }
}

const CLAIM_KEY = `claims/${ATTACKER}/0000000001-0123456789abcdef.json`;
const VICTIM_CLAIM_KEY = `claims/${VICTIM}/0000000001-fedcba9876543210.json`;

/** Timestamps the contract accepts at its edges: year 0, year 9999 (year 10000 in UTC), offsets, nanoseconds, leap days. */
export const edgeTimestamps = fc.constantFrom(
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59-12:00',
  '2028-02-29T23:59:59.999999999+05:45',
  '2026-02-06T14:00:00.000001Z',
);

/** A valid turn.saved of the attacker, with every optional part. */
const sampleTurn = () =>
  validTurn(ATTACKER, 1, 'Actually, I meant the 40 gallon reef tank.', {
    context: '## Plan\n1. Correct the tank size',
    signals: { validation: 'APPROVE', quality: 0.9, route: 'answer', contradiction: false },
    attributes: { channel: 'web' },
    sources: [{ domain: 'reefkeeping.example', outcome: 'success', extractionQuality: 0.8 }],
    episode: {
      goal: 'Correct the tank size',
      actions: [{ capability: 'memory.update', result: 'done' }],
      outcome: { success: true },
    },
  });

/** A turn.saved whose payload is a claim check, the claim and the payload it points at each with one field changed. */
function claimCheckTarget(
  turn: Record<string, unknown>,
  nested: Record<string, fc.Arbitrary<unknown>>,
  o: FuzzOptions,
): FuzzTarget<{ claim: Mutated; payload: Mutated }> {
  const claim = {
    type: 'turn.saved',
    version: 1,
    userId: ATTACKER,
    sessionId: 's-1',
    turnId: 1,
    timestamp: TURN_TIME,
    payloadRef: { key: CLAIM_KEY, bytes: 300_000 },
  };
  const payloadRef = fc.oneof(
    mutate({ key: CLAIM_KEY, bytes: 300_000 }, o).map((m) => m.value),
    fc.record({
      key: fc.oneof(
        pathLike(VICTIM),
        fc.constant(VICTIM_CLAIM_KEY),
        fc.constant(`users/${VICTIM}/turns/0000000001/x.md`),
      ),
      bytes: fc.nat(),
    }),
  );
  return {
    name: 'turn.saved claim-check',
    weight: 2,
    // The claim (one field changed) and the payload it points at (one field changed, often large).
    arbitrary: fc.record({
      claim: mutate(claim, { ...o, nested: { payloadRef } }),
      // Mostly the claimed turn as published, so the claim's own changes decide.
      payload: fc.oneof(
        {
          weight: 2,
          arbitrary: fc.constant<Mutated>({
            value: { ...turn, response: 'r'.repeat(300_000) },
            kind: 'valid',
            field: '',
          }),
        },
        { weight: 1, arbitrary: mutate({ ...turn, response: 'r'.repeat(300_000) }, { ...o, nested }) },
      ),
    }),
    run: ({ claim: cm, payload }) =>
      runIngest({ bodies: [{ body: JSON.stringify(cm.value) ?? 'null', mutation: cm, payload }] }, () => {
        const objects = new Map([
          [CLAIM_KEY, JSON.stringify(payload.value) ?? 'null'],
          [VICTIM_CLAIM_KEY, JSON.stringify(validTurn(VICTIM, 1, `victim's words ${SECRET}`))],
          [`users/${VICTIM}/turns/0000000001/x.md`, `---\nuser: ${VICTIM}\n---\n${SECRET}`],
        ]);
        const bucket = new ClaimBucket(objects);
        const store = new S3ClaimCheckStore({ s3: bucket as unknown as S3Client, bucketName: 'bucket' });
        return Object.assign(store, { reads: bucket.reads });
      }),
  };
}

export function turnQueueTargets(o: FuzzOptions): FuzzTarget[] {
  const turn = sampleTurn();
  const nested = {
    signals: signalsArb(o),
    attributes: attributesArb(o),
    timestamp: edgeTimestamps,
    sources: sourcesArb(o),
    episode: episodeArb(o),
  };
  const session = {
    type: 'session.closed',
    version: 1,
    userId: ATTACKER,
    sessionId: 's-1',
    timestamp: TURN_TIME,
    reason: 'user_left',
  };
  const agent = {
    type: 'agent.event',
    version: 1,
    userId: ATTACKER,
    sessionId: 's-1',
    timestamp: TURN_TIME,
    trigger: 'milestone',
    turnId: 1,
    detail: 'tank set up',
    attributes: { channel: 'web' },
    episode: {
      goal: 'Set up the tank',
      actions: [{ capability: 'shop.order', result: 'ordered' }],
      outcome: { success: true },
    },
  };
  return [
    {
      name: 'turn.saved',
      weight: 3,
      arbitrary: queueCase(turn, { ...o, fields: ['context', 'signals', 'attributes', 'sources', 'episode'], nested }),
      run: (c: QueueCase) => runIngest(c),
    },
    claimCheckTarget(turn, nested, o),
    {
      name: 'session.closed',
      weight: 1,
      arbitrary: queueCase(session, { ...o, fields: ['reason'], nested: { timestamp: edgeTimestamps } }),
      run: (c: QueueCase) => runIngest(c),
    },
    {
      name: 'agent.event',
      weight: 1,
      arbitrary: queueCase(agent, {
        ...o,
        fields: ['sessionId', 'turnId', 'detail', 'attributes', 'episode'],
        nested: { attributes: attributesArb(o), timestamp: edgeTimestamps, episode: episodeArb(o) },
      }),
      run: (c: QueueCase) => runIngest(c),
    },
  ] as FuzzTarget[];
}
