import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import {
  findRecurrences,
  knowledgePathFor,
  promotedDocument,
  restagedMarkdown,
  type StagedRecord,
} from '../../lib/knowledge/promotion.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import type { StagedDocument } from '../../lib/knowledge/staging.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';

const record = (path: string, text: string, batchId: string, kind: StagedRecord['kind'] = 'fact'): StagedRecord => ({
  path,
  kind,
  title: path,
  category: 'Facts',
  text,
  confidence: 0.6,
  sourceTurns: [1],
  batchId,
  stagedAt: '',
  meta: {},
  body: text,
  promotedBy: [],
  status: 'staged',
});
const fresh = (title: string, text: string, kind: StagedDocument['kind'] = 'fact'): StagedDocument => ({
  path: `Facts/${title}--b9.md`,
  kind,
  title,
  category: 'Facts',
  confidence: 0.6,
  sourceTurns: [1],
  text,
  meta: {},
  body: text,
  markdown: text,
});

describe('promotion (req R-PRO)', () => {
  const staged = [
    record('Facts/rex--b1.md', 'The user adopted a beagle named Rex.', 'b1'),
    record('Facts/alps--b1.md', 'The user hikes in the Alps every summer.', 'b1'),
  ];

  it('a new output recurring in an earlier staged item reinforces it instead of being staged again', () => {
    const r = findRecurrences(
      staged,
      [fresh('rex', 'The user adopted a beagle named Rex last week.'), fresh('tax', 'The user files taxes in April.')],
      'b9',
    );
    expect(r.reinforcements.map((x) => x.staged.path)).toEqual(['Facts/rex--b1.md']);
    expect(r.reinforcements[0]?.similarity).toBeGreaterThan(0.7);
    expect(r.toStage.map((d) => d.title)).toEqual(['tax']);
  });

  it("ignores the batch's own staged items (a redelivery) and items of another kind", () => {
    expect(
      findRecurrences(staged, [fresh('rex', 'The user adopted a beagle named Rex.')], 'b1').reinforcements,
    ).toEqual([]);
    expect(
      findRecurrences(staged, [fresh('rex', 'The user adopted a beagle named Rex.', 'open_question')], 'b9')
        .reinforcements,
    ).toEqual([]);
  });

  it('knowledge a reviewer discarded is neither staged again nor reinforced', () => {
    const discarded = staged.map((s) => (s.path === 'Facts/rex--b1.md' ? { ...s, status: 'discarded' as const } : s));
    const r = findRecurrences(discarded, [fresh('rex', 'The user adopted a beagle named Rex last week.')], 'b9');
    expect(r.reinforcements).toEqual([]);
    expect(r.toStage).toEqual([]);
    expect(r.suppressed.map((x) => x.discarded.path)).toEqual(['Facts/rex--b1.md']);
  });

  it('promotes under the plain name unless taken, with confidence raised per recurrence', () => {
    const r = { ...record('Facts/rex--b1.md', 'text', 'b1'), promotedBy: ['b2', 'b3'] };
    expect(knowledgePathFor(r, new Set())).toBe('Facts/rex.md');
    expect(knowledgePathFor(r, new Set(['Facts/rex.md']))).toBe('Facts/rex--b1.md');
    const p = promotedDocument(r, 'Facts/rex.md', '2026-02-07T00:00:00Z');
    expect(p.doc).toMatchObject({ id: 'Facts/rex.md', confidence: 0.7 });
    expect(p.markdown).toContain('promotion_count: 2');
    expect(p.markdown).toContain('promoted_at: 2026-02-07T00:00:00Z');
  });
});

describe('the staged document (req R-STG): its record rendered', () => {
  it("carries the seed's front matter, and one record renders the same bytes whatever order its maps were read in", () => {
    const meta = {
      kind: 'fact',
      title: 'rex',
      category: 'Facts',
      staged_at: '2026-02-06T14:10:00Z',
      batch_id: 'batch-1-10',
      promotion_count: 0,
      source_turns: [1],
      confidence: 0.6,
    };
    const a = {
      ...record('Facts/rex--batch-1-10.md', 'Rex.', 'batch-1-10'),
      promotedBy: ['batch-11-20'],
      meta: {
        ...meta,
        source_attributes: { '1': { session: '3', dia_ids: 'D1:1' } },
        source_reliability: { 'b.example': 0.5, 'a.example': 0.7 },
      },
    };
    const b = {
      ...a,
      meta: {
        source_reliability: { 'a.example': 0.7, 'b.example': 0.5 },
        ...meta,
        source_attributes: { '1': { dia_ids: 'D1:1', session: '3' } },
      },
    };
    expect(restagedMarkdown(a)).toBe(restagedMarkdown(b));
    const front = parseFrontMatter(restagedMarkdown(a)).meta;
    expect(Object.keys(front).slice(0, 8)).toEqual([
      'kind',
      'title',
      'category',
      'staged_at',
      'batch_id',
      'promotion_count',
      'source_turns',
      'confidence',
    ]);
    expect(front).toMatchObject({
      staged_at: '2026-02-06T14:10:00Z',
      batch_id: 'batch-1-10',
      promotion_count: 1,
      promoted_by: ['batch-11-20'],
      source_turns: [1],
      confidence: 0.6,
    });
  });
});

describe('promotion through the reflector', () => {
  it('an item recurring in two later batches moves to Knowledge; one that does not recur stays staged', async () => {
    const ingest = ingestDeps();
    const queries = (n: number) =>
      n % 10 === 1 ? 'I adopted a beagle named Rex' : n === 2 ? 'I file my taxes every April' : `entry${n}`;
    await ingestTurns(
      Array.from({ length: 30 }, (_, i) => ({
        messageId: `m${i}`,
        body: JSON.stringify(turn({ userId: 'alice', turnId: i + 1, query: queries(i + 1) })),
      })),
      ingest,
    );
    const [j1, j2, j3] = ingest.jobs.jobs as [Job, Job, Job];
    const rex = (t: number) => ({
      title: 'dog_rex',
      content: 'The user adopted a beagle named Rex.',
      source_turns: [t],
      category: 'Facts',
    });
    const replies: Record<string, unknown> = {
      [j1.jobId]: {
        new_facts: [
          rex(1),
          { title: 'taxes', content: 'The user files taxes every April.', source_turns: [2], category: 'Facts' },
        ],
      },
      [j2.jobId]: { new_facts: [rex(11)] },
      [j3.jobId]: { new_facts: [rex(21)] },
    };
    let current = '';
    const deps = reflectionDeps(ingest, new ScriptedModel(() => replies[current]));
    const run = async (j: Job) => {
      current = j.jobId;
      const out = await runReflection(j, deps);
      if (!('log' in out)) throw new Error(out.reason);
      return out.log;
    };
    const l1 = await run(j1);
    expect(l1.staged_files.sort()).toEqual([
      'Knowledge_staging/Facts/dog_rex--batch-1-10.md',
      'Knowledge_staging/Facts/taxes--batch-1-10.md',
    ]);
    const l2 = await run(j2);
    expect(l2).toMatchObject({
      staged_files: [],
      promoted_files: [],
      reinforced: [
        expect.objectContaining({ staged_file: 'Knowledge_staging/Facts/dog_rex--batch-1-10.md', promotion_count: 1 }),
      ],
    });
    const l3 = await run(j3);
    expect(l3.promoted_files).toEqual(['Knowledge/Facts/dog_rex.md']);
    expect([...deps.knowledge.knowledgeFiles.keys()]).toEqual(['alice/Facts/dog_rex.md']);
    expect([...deps.knowledge.staged.keys()]).toEqual(['alice/Facts/taxes--batch-1-10.md']);
    // Redelivering the third batch changes nothing.
    expect((await runReflection(j3, deps)).status).toBe('already_done');
    expect(deps.knowledge.records.get('alice/Facts/dog_rex--batch-1-10.md')?.promotedBy).toEqual([j2.jobId, j3.jobId]);
  });
});
