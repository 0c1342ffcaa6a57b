/** Prompt injection, in process: the reflector's model obeys the attacker (a fuzz target). */
import fc from 'fast-check';
import type { Job } from '../events/job.js';
import { ScriptedModel } from '../lib/model/language-model.fake.js';
import { MemorySummarySource } from '../lib/summaries/summary.fake.js';
import {
  ATTACKER,
  edgeNumber,
  hostileString,
  injectionTexts,
  oddUnicode,
  oversized,
  pathLike,
  VICTIM,
} from '../test/helpers/hostile-input.js';
import {
  type CaseResult,
  count,
  type FuzzOptions,
  type FuzzTarget,
  guarded,
  NOW,
  range,
  storageProblems,
  world,
} from './fuzz-world.js';
import { capProblems, recordPending, reflectorDeps, runJobRecord } from './fuzz-jobs.js';

/** The first turn of every injection case: items citing turn 1 with these words pass the keyword gate. */
const REEF = 'I keep a reef tank with clownfish.';

const facts = (n: number, text: string) => ({
  new_facts: Array.from({ length: n }, (_, i) => ({
    title: `reef_fact_${i}`,
    content: `${text} reef tank clownfish ${i}`,
    source_turns: [1],
    category: 'Facts',
  })),
  corrections: Array.from({ length: Math.min(n, 1000) }, () => ({
    existing_file: 'Facts/reef.md',
    what_changed: 'reef tank is 40 gallons',
    source_turns: [1],
    new_confidence_hint: 'higher',
  })),
  open_questions: Array.from({ length: Math.min(n, 1000) }, (_, i) => ({
    question: `reef tank clownfish question ${i}?`,
    source_turns: [1],
  })),
});

/** Structured output of any shape: hostile text, paths out of the folder, odd turn numbers, the victim's id. */
function structuredOutput(small: FuzzOptions) {
  const text = fc.oneof(
    { weight: 2, arbitrary: fc.constant('The user keeps a reef tank with clownfish.') },
    { weight: 3, arbitrary: hostileString(small) },
    { weight: 1, arbitrary: fc.constantFrom(...injectionTexts()) },
  );
  const turns = fc.oneof(
    fc.constant([1]),
    fc.constant([1, 2]),
    fc.array(fc.oneof(edgeNumber, fc.integer({ min: -3, max: 30 })), { maxLength: 25 }),
  );
  const path = fc.oneof(
    pathLike(VICTIM),
    fc.constantFrom('Facts/reef.md', 'Facts/secret.md', `../${VICTIM}/Knowledge/Facts/secret.md`),
  );
  const fact = fc.record(
    {
      title: fc.oneof(text, path),
      content: text,
      source_turns: turns,
      related_existing: fc.array(path, { maxLength: 12 }),
      category: fc.oneof(fc.constantFrom('Facts', 'Concepts', 'Patterns'), path),
      userId: fc.constant(VICTIM),
      user_id: fc.constant(VICTIM),
      path,
    },
    { requiredKeys: ['title', 'content', 'source_turns', 'category'] },
  );
  const correction = fc.record({
    existing_file: path,
    what_changed: text,
    source_turns: turns,
    new_confidence_hint: fc.constantFrom('higher', 'lower', 'same'),
  });
  const connection = fc.record({ file_a: path, file_b: path, relationship: text, source_turns: turns });
  const question = fc.record(
    { question: text, source_turns: turns, why_unresolved: text },
    { requiredKeys: ['question', 'source_turns'] },
  );
  return fc.record(
    {
      new_facts: fc.array(fact, { maxLength: 6 }),
      corrections: fc.array(correction, { maxLength: 3 }),
      connections: fc.array(connection, { maxLength: 3 }),
      open_questions: fc.array(question, { maxLength: 4 }),
      userId: fc.constant(VICTIM),
    },
    { requiredKeys: [] },
  );
}

/**
 * Obedient and well-formed output: every item passes the schema and cites the turn it echoes,
 * so the gates and the code that names files are what stands between it and the bucket.
 */
function obedientOutput(small: FuzzOptions) {
  const title = fc.oneof(
    fc.constantFrom(
      `../../../../users/${VICTIM}/Knowledge/Facts/pwned`,
      `users/${VICTIM}/Knowledge/Facts/pwned`,
      '/etc/passwd',
      '..',
      '.',
      `..\\..\\${VICTIM}`,
      `${VICTIM}/reef`,
    ),
    pathLike(VICTIM).filter((t) => t.length <= 120),
    oddUnicode.map((t) => t.slice(0, 120)).filter((t) => t.length > 0),
  );
  const echo = fc.oneof(
    fc.constant(REEF),
    hostileString(small).map((t) => `${REEF} ${t}`.slice(0, 2000)),
  );
  const cites = fc.constantFrom([1], [1, 2], [1, 2, 3], range(5), range(20));
  const okPaths = fc.constantFrom<string[]>([], ['Facts/reef.md'], ['Knowledge/Facts/reef.md']);
  return fc.record({
    new_facts: fc.array(
      fc.record({
        title,
        content: echo,
        source_turns: cites,
        related_existing: okPaths,
        category: fc.constantFrom('Facts', 'Concepts', 'Patterns'),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    corrections: fc.array(
      fc.record({
        existing_file: fc.constantFrom('Facts/reef.md', `../../${VICTIM}/Knowledge/Facts/secret.md`),
        what_changed: echo,
        source_turns: fc.constantFrom([1, 2], [1, 2, 3]),
        new_confidence_hint: fc.constantFrom('higher', 'lower', 'same'),
      }),
      { maxLength: 2 },
    ),
    connections: fc.array(
      fc.record({
        file_a: fc.constant('Facts/reef.md'),
        file_b: fc.constantFrom('Facts/reef.md', `../${VICTIM}/Facts/x.md`),
        relationship: echo,
        source_turns: cites,
      }),
      { maxLength: 2 },
    ),
    open_questions: fc.array(
      fc.record({
        question: fc.oneof(title, echo).map((q) => `${q} reef tank?`.slice(0, 1000)),
        source_turns: cites,
        why_unresolved: echo.map((t) => t.slice(0, 1000)),
      }),
      { maxLength: 3 },
    ),
  });
}

/** What an obedient model answers: paths out of the user's folder, other users' ids, huge and odd output. */
export function hostileModelOutput(o: FuzzOptions = {}): fc.Arbitrary<unknown> {
  const small = { ...o, maxBytes: 0 };
  const obedient = obedientOutput(small);
  const structured = structuredOutput(small);
  return fc.oneof(
    { weight: 6, arbitrary: obedient },
    { weight: 4, arbitrary: structured },
    { weight: 2, arbitrary: fc.integer({ min: 3, max: 30_000 }).map((n) => facts(n, 'many')) },
    {
      weight: 1,
      arbitrary: structured.map(
        (s) =>
          `Sure! Here is the reflection:\n\`\`\`json\n${JSON.stringify(s)}\n\`\`\`\nand {"new_facts": [{"title": "${VICTIM}"`,
      ),
    },
    { weight: 1, arbitrary: hostileString(o) },
    {
      weight: 1,
      arbitrary: oversized(200 * 1024, Math.max(200 * 1024, o.maxBytes ?? 3 << 20)).map((s) => ({
        new_facts: [{ title: 'big', content: s, source_turns: [1], category: 'Facts' }],
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 2_000, max: 10_000 })
        .map((depth) => ({ new_facts: JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) })),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  );
}

const hostileFindings = (o: FuzzOptions) => {
  const small = { ...o, maxBytes: 0 };
  const finding = fc.record(
    {
      category: fc.oneof(
        fc.constantFrom('pattern', 'contradiction', 'correction', 'preference', 'relationship', 'unresolved'),
        hostileString(small),
      ),
      confidence: fc.constantFrom('HIGH', 'MEDIUM', 'LOW'),
      statement: fc.oneof(
        fc.constant('The user keeps a reef tank with clownfish.'),
        hostileString(small),
        pathLike(VICTIM),
      ),
      evidence_turns: fc.oneof(fc.constant([1, 2]), fc.array(fc.integer({ min: -1, max: 50 }), { maxLength: 60 })),
      subject: fc.constant(VICTIM),
      relationship: pathLike(VICTIM),
      object: fc.constant(`users/${VICTIM}/Knowledge/x.md`),
    },
    { requiredKeys: ['category', 'confidence', 'statement', 'evidence_turns'] },
  );
  const stored = fc.record({
    category: fc.constantFrom('pattern', 'contradiction', 'correction', 'relationship', 'unresolved'),
    confidence: fc.constantFrom('HIGH', 'MEDIUM'),
    statement: fc
      .oneof(pathLike(VICTIM), fc.constant(`../../../../users/${VICTIM}/Knowledge/pwned`), oddUnicode)
      .map((t) => (t.length > 0 ? t.slice(0, 1000) : 'x')),
    evidence_turns: fc.constantFrom([1, 2], [1, 2, 3]),
    sides: fc.constant(['the tank holds 30 gallons (turn 1)', 'the tank holds 40 gallons (turn 2)']),
    wrong: fc.constant('30 gallons'),
    right: fc.constant('40 gallons'),
    subject: fc.oneof(
      fc.constant(`../../../users/${VICTIM}`),
      pathLike(VICTIM).map((t) => t.slice(0, 200)),
    ),
    relationship: fc.constant('owns'),
    object: fc.constant(`users/${VICTIM}/Knowledge/x.md`),
  });
  return fc.oneof(
    fc.record({ findings: fc.array(stored, { minLength: 1, maxLength: 10 }) }),
    fc.record({ findings: fc.array(finding, { maxLength: 40 }) }),
    fc
      .integer({ min: 31, max: 20_000 })
      .map((n) => ({
        findings: Array.from({ length: n }, (_, i) => ({
          category: 'pattern',
          confidence: 'HIGH',
          statement: `reef tank ${i}`,
          evidence_turns: [1, 2],
        })),
      })),
    hostileString(o),
  );
};

const hostileWeekly = (o: FuzzOptions) =>
  fc.oneof(
    fc.record({
      trajectory: hostileString({ ...o, maxBytes: 0 }),
      topic_drift: fc.array(
        fc.record({ topic: pathLike(VICTIM), status: fc.constantFrom('dropped', 'new', 'continuing') }),
        { maxLength: 25 },
      ),
      weekly_patterns: fc.array(hostileString({ ...o, maxBytes: 0 }), { maxLength: 12 }),
      unresolved_arcs: fc.array(pathLike(VICTIM), { maxLength: 12 }),
    }),
    hostileString(o),
  );

export interface InjectionCase {
  use: 'batch' | 'nightly' | 'weekly' | 'summary';
  /** The attacker's turns carry the largest attributes the contract allows. */
  largest?: boolean;
  texts: string[];
  output: unknown;
  summary: string;
}

/** The cases: an obedient model's answer to a batch, a nightly or weekly run, or a summary, over the attacker's turns. */
function injectionCases(o: FuzzOptions): fc.Arbitrary<InjectionCase> {
  const texts = fc
    .array(fc.oneof(fc.constantFrom(...injectionTexts()), fc.constant(REEF)), { minLength: 3, maxLength: 10 })
    .map((t) => [REEF, REEF, ...t]);
  const twenty = fc
    .array(fc.oneof(fc.constantFrom(...injectionTexts()), fc.constant(REEF)), { minLength: 18, maxLength: 18 })
    .map((t) => [REEF, REEF, ...t]);
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        use: fc.constant('batch' as const),
        texts,
        output: hostileModelOutput(o),
        summary: fc.constant(''),
      }),
    },
    // Twenty turns with the largest attributes, and items citing all of them.
    {
      weight: 1,
      arbitrary: fc.record({
        use: fc.constant('batch' as const),
        largest: fc.constant(true),
        texts: twenty,
        output: hostileModelOutput(o),
        summary: fc.constant(''),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        use: fc.constant('nightly' as const),
        texts,
        output: hostileFindings(o),
        summary: fc.constant(''),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        use: fc.constant('weekly' as const),
        texts,
        output: hostileWeekly(o),
        summary: fc.constant('A summary.'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        use: fc.constant('summary' as const),
        texts,
        output: fc.constant(null),
        summary: fc.oneof(
          hostileString(o),
          fc.constantFrom(...injectionTexts()),
          oversized(100 * 1024, Math.max(100 * 1024, o.maxBytes ?? 3 << 20)),
        ),
      }),
    },
  );
}

/** One job of the attacker's through the reflector's record handler with a model that obeys the attacker. */
async function runInjection(c: InjectionCase): Promise<CaseResult> {
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  const { world: w, victimBefore } = await world(c.texts, { largestAttributes: c.largest === true });
  const reef = {
    id: 'Facts/reef.md',
    title: 'reef',
    text: 'The tank holds 30 gallons.',
    category: 'Facts',
    confidence: 0.95,
    sourceTurns: [1],
    summary: 'tank size',
    promotedAt: NOW,
  };
  await w.knowledge.putKnowledge(ATTACKER, [{ path: reef.id, markdown: reef.text, doc: reef }]);
  w.writes.writes.length = 0;
  const model = new ScriptedModel(
    () => c.output,
    () => c.summary,
  );
  const deps = reflectorDeps(w, model);
  const ids = range(c.texts.length);
  const kind = c.use === 'summary' ? 'idle-summary' : c.use === 'batch' ? 'batch' : c.use;
  const job: Job = {
    type: 'reflector.job',
    version: 1,
    jobId: `${kind}-1-${ids.length}`,
    userId: ATTACKER,
    kind,
    trigger: 'turn_count',
    urgency: 6,
    turnIds: ids,
    requestedAt: NOW,
  };
  if (c.use === 'weekly')
    deps.sleepTime.summaries = Object.assign(new MemorySummarySource(), {
      texts: [{ userId: ATTACKER, id: 'summary-1-3', createdAt: NOW, text: 'reef tank talk' }],
    });
  await guarded(failures, `${c.use} with an obedient model`, async () => {
    await recordPending(w, job);
    count(outcomes, await runJobRecord(w, JSON.stringify(job), deps));
  });
  failures.push(...storageProblems(w, new Set([ATTACKER]), victimBefore));
  for (const log of w.batchLogs.logs.values()) {
    failures.push(...capProblems(log));
    count(outcomes, `batch staged ${log.staged_files.length}`);
  }
  for (const run of w.runs.runs)
    if (run.stored.length > 30) failures.push(`a nightly run stored ${run.stored.length} findings`);
  return { failures, outcomes };
}

export function injectionTarget(o: FuzzOptions): FuzzTarget<InjectionCase> {
  return { name: 'prompt injection (in process)', weight: 3, arbitrary: injectionCases(o), run: runInjection };
}
