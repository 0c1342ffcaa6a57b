/**
 * Req R-DIARY, the selective diary: an entry only when a batch meets an impact
 * criterion; every rejected attempt is kept with its reason.
 */
import { describe, expect, it } from 'vitest';
import { decideDiaryEntry, type DiaryInput, diaryMarkdown, diaryRecord } from '../../lib/diary/diary.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';

const empty = { new_facts: [], corrections: [], connections: [], open_questions: [] };
const base = (over: Partial<DiaryInput> = {}): DiaryInput => ({
  batchId: 'batch-1-10',
  trigger: 'turn_count',
  turns: [turn({ turnId: 1, query: 'We talked about the weather.' })],
  passed: empty,
  staged: [
    {
      path: 'Facts/weather--batch-1-10.md',
      title: 'weather',
      category: 'Facts',
      text: 'The user mentioned the weather.',
    },
  ],
  promoted: [],
  reinforced: [],
  assessment: { confidence: 0.9, caution: 0.1, sentiment: 0.2 },
  ...over,
});

describe('the selective diary (req R-DIARY)', () => {
  it('rejects a batch that meets no criterion, with the reason', () => {
    expect(decideDiaryEntry(base())).toEqual({
      write: false,
      criteria: { impact: [], reusable: [], lesson: [], user_signal: [] },
      reason: 'no impact, nothing reusable, no lesson and no user signal in this batch',
    });
  });

  it('writes for each criterion, naming its evidence', () => {
    const correction = {
      existing_file: 'Facts/tank.md',
      what_changed: '40 gallons',
      source_turns: [1],
      new_confidence_hint: 'higher' as const,
    };
    expect(decideDiaryEntry(base({ passed: { ...empty, corrections: [correction] } })).criteria.impact).toEqual([
      'correction of Facts/tank.md',
    ]);
    expect(decideDiaryEntry(base({ trigger: 'event:user_request' })).criteria.impact).toEqual([
      'fired by event:user_request',
    ]);
    expect(
      decideDiaryEntry(base({ turns: [turn({ turnId: 4, signals: { validation: 'FAIL' } })] })).criteria.impact,
    ).toEqual(['turn 4 validated FAIL']);
    expect(decideDiaryEntry(base({ promoted: ['Knowledge/Facts/rex.md'] })).criteria.reusable).toEqual([
      'promoted Knowledge/Facts/rex.md',
    ]);
    expect(
      decideDiaryEntry(
        base({ reinforced: [{ item: 'dog_rex', staged_file: 'Knowledge_staging/Facts/dog_rex--batch-1-5.md' }] }),
      ).criteria.reusable,
    ).toEqual(['recurred: dog_rex']);
    expect(
      decideDiaryEntry(
        base({
          staged: [
            { path: 'Patterns/x.md', title: 'recurring_topic_hiking', category: 'Patterns', text: 'hiking again' },
          ],
        }),
      ).criteria.lesson,
    ).toEqual(['pattern: recurring_topic_hiking']);
    expect(
      decideDiaryEntry(base({ assessment: { confidence: 0.4, caution: 0.6, sentiment: -0.5 } })).criteria.lesson,
    ).toEqual(['caution 0.6']);
    expect(
      decideDiaryEntry(base({ turns: [turn({ turnId: 2, query: 'Please remember that I am vegetarian.' })] })).criteria
        .user_signal,
    ).toEqual(['turn 2: "Please remember"']);
    // Reminiscing is not a request to keep something.
    expect(
      decideDiaryEntry(
        base({ turns: [turn({ turnId: 2, query: 'Do you remember when we went hiking? It is important to rest.' })] }),
      ).write,
    ).toBe(false);
    const failed = decideDiaryEntry(
      base({
        turns: [
          turn({
            turnId: 3,
            episode: { goal: 'Book a table', actions: [], outcome: { success: false, failureReason: 'fully booked' } },
          }),
        ],
      }),
    );
    expect(failed).toMatchObject({
      write: true,
      criteria: { impact: ['episode of turn 3 failed'], lesson: ['turn 3: Book a table failed (fully booked)'] },
    });
  });

  it('writes the entry with its criteria, what was learned and what is still open', () => {
    const input = base({
      promoted: ['Knowledge/Facts/rex.md'],
      passed: { ...empty, open_questions: [{ question: 'Which vet?', source_turns: [1], why_unresolved: '' }] },
    });
    const doc = diaryMarkdown(diaryRecord('alice', input, decideDiaryEntry(input), '2026-02-06T14:00:00.000Z'));
    expect(parseFrontMatter(doc).meta).toMatchObject({
      kind: 'diary',
      batch_id: 'batch-1-10',
      turns: [1],
      criteria: ['reusable'],
    });
    expect(doc).toContain('- **reusable**: promoted Knowledge/Facts/rex.md');
    expect(doc).toContain('## Learned\n- weather: The user mentioned the weather.');
    expect(doc).toContain('## Still open\n- Which vet?');
  });

  it('the reflector writes an entry for a batch that mattered and logs a rejected attempt otherwise', async () => {
    const setup = async (queries: string[]) => {
      const ingest = ingestDeps();
      await ingestTurns(
        queries.map((query, i) => ({
          messageId: `m${i}`,
          body: JSON.stringify(turn({ userId: 'alice', turnId: i + 1, query, response: 'ok' })),
        })),
        ingest,
      );
      const deps = reflectionDeps(
        ingest,
        new ScriptedModel(() => ({
          new_facts: [
            { title: 'dog_rex', content: 'The user adopted a beagle named Rex.', source_turns: [3], category: 'Facts' },
          ],
        })),
      );
      const job = ingest.jobs.jobs[0]!;
      expect((await runReflection(job, deps)).status).toBe('completed');
      return Object.assign(deps, { jobId: job.jobId });
    };
    const plain = await setup(
      Array.from({ length: 10 }, (_, i) => (i === 2 ? 'I adopted a beagle named Rex' : `entry ${i}`)),
    );
    expect(plain.batchLogs.logs.get(`alice/${plain.jobId}`)?.diary).toMatchObject({
      written: false,
      reason: expect.stringContaining('no impact'),
    });
    expect((await plain.diary.page('alice', { limit: 10 })).entries).toEqual([
      expect.objectContaining({ id: plain.jobId, written: false }),
    ]);
    expect(plain.log.entries).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: 'diary entry not written',
        extra: expect.objectContaining({ batchId: plain.jobId }),
      }),
    );
    const asked = await setup(
      Array.from({ length: 10 }, (_, i) =>
        i === 2 ? 'I adopted a beagle named Rex, please remember that' : `entry ${i}`,
      ),
    );
    expect(asked.batchLogs.logs.get(`alice/${asked.jobId}`)?.diary).toMatchObject({
      written: true,
      path: `diary/${asked.jobId}.md`,
      criteria: { user_signal: ['turn 3: "please remember"'] },
    });
    // The entry is its record (no S3 object); its markdown is rendered from it.
    const [entry] = (await asked.diary.page('alice', { limit: 10 })).entries;
    expect(entry).toMatchObject({ id: asked.jobId, written: true });
    expect(diaryMarkdown(entry!)).toContain('## Learned\n- dog_rex: The user adopted a beagle named Rex.');
    expect(parseFrontMatter(diaryMarkdown(entry!)).meta).toMatchObject({
      kind: 'diary',
      batch_id: asked.jobId,
      criteria: ['user_signal'],
    });
  });
});
