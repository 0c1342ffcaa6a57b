import { describe, expect, it } from 'vitest';
import { assembleBatch, buildReflectorPrompt } from '../../lib/batches/batch-assembly.js';
import { BatchAnswerSchema } from '../../lib/batches/batch-answer.js';
import { nightlyPrompt } from '../../lib/sleep-time/nightly.js';
import { weeklyPrompt } from '../../lib/sleep-time/weekly.js';
import { parseReflectorPrompt, reflectOffline } from '../../lib/offline-model/rule-reflector.js';
import { nightlyOffline, weeklyOffline } from '../../lib/offline-model/rule-sleep-time.js';
import { turn } from '../../lib/turns/turn.fake.js';

const prompt = (queries: Array<[string, string]>, existing: Array<{ path: string; summary: string }> = []) =>
  buildReflectorPrompt(
    assembleBatch(queries.map(([query, response], i) => turn({ turnId: i + 1, query, response }))),
    existing,
  );

describe('the offline model (rule-based, not an LLM)', () => {
  it('reads turns and existing knowledge back from the reflector prompt', () => {
    const p = prompt(
      [
        ['first\nline two', 'reply'],
        ['second', 'reply 2'],
      ],
      [{ path: 'Facts/a.md', summary: 'a' }],
    );
    expect(parseReflectorPrompt(p)).toEqual({
      turns: [
        { turnId: 1, user: 'first\nline two', agent: 'reply' },
        { turnId: 2, user: 'second', agent: 'reply 2' },
      ],
      existing: [{ path: 'Facts/a.md', summary: 'a' }],
    });
  });

  it('finds stated facts and preferences, unanswered questions and recurring topics', () => {
    const out = reflectOffline(
      prompt([
        ['I work as a nurse at the county hospital. I love hiking in the Alps.', 'That sounds demanding.'],
        ['What dose of magnesium should I take?', "I'm not sure, ask your doctor."],
        ['More hiking plans this summer', 'Nice.'],
        ['hiking boots advice', 'Buy good ones.'],
      ]),
    );
    expect(BatchAnswerSchema.safeParse(out).success).toBe(true);
    expect(out.new_facts.map((f) => f.title)).toEqual(
      expect.arrayContaining([
        'work_a_nurse_at_the_county_hospital',
        'preference_hiking_in_the_alps',
        'recurring_topic_hiking',
      ]),
    );
    expect(out.open_questions).toEqual([
      expect.objectContaining({
        question: 'What dose of magnesium should I take?',
        source_turns: [2],
        why_unresolved: 'the reply was uncertain',
      }),
    ]);
  });

  it('turns a correction into a correction of the matching existing file', () => {
    const out = reflectOffline(
      prompt(
        [['Actually my tank is 40 gallons, not 20.', 'Noted.']],
        [{ path: 'Facts/reef_tank.md', summary: 'user has a 20 gallon tank' }],
      ),
    );
    expect(out.corrections).toEqual([
      expect.objectContaining({ existing_file: 'Facts/reef_tank.md', source_turns: [1] }),
    ]);
  });

  it('is deterministic', () => {
    const p = prompt([
      ['I love jazz. I have a cat.', 'ok'],
      ['jazz again', 'ok'],
      ['jazz forever', 'ok'],
    ]);
    expect(reflectOffline(p)).toEqual(reflectOffline(p));
  });

  it('assesses the batch: corrections and uncertain replies raise caution and lower confidence; words give the sentiment', () => {
    const calm = reflectOffline(
      prompt([
        ['I love my new garden, thanks!', 'Glad to hear it.'],
        ['It has tomatoes.', 'Nice.'],
      ]),
    );
    expect(calm.assessment).toEqual({ confidence: 0.9, caution: 0, sentiment: 1 });
    const tense = reflectOffline(
      prompt([
        ['Actually that is wrong, I meant the other one.', "I'm not sure what you mean."],
        ['I am so frustrated.', 'Sorry.'],
      ]),
    );
    expect(tense.assessment.caution).toBe(1);
    expect(tense.assessment.confidence).toBe(0.4);
    expect(tense.assessment.sentiment).toBe(-1);
  });

  it('reads every line of a summary in a nightly or weekly prompt, not its first alone', () => {
    const summary =
      'Turns 1–3: the user talked about kayaking.\nThey said: I love kayaking on the lake.\nStill open: Which lake is warmer in June?';
    const nightly = nightlyOffline(nightlyPrompt(`### Summary of turns 1–3\n${summary}`, [])).findings;
    expect(nightly).toContainEqual(
      expect.objectContaining({
        category: 'preference',
        statement: 'The user likes kayaking.',
        evidence_turns: [1, 3],
      }),
    );
    expect(nightly).toContainEqual(
      expect.objectContaining({
        category: 'unresolved',
        statement: 'Which lake is warmer in June?',
        evidence_turns: [1, 3],
      }),
    );
    const weekly = weeklyOffline(weeklyPrompt([{ source: 'summary', at: '2026-02-06T20:00:00Z', text: summary }]));
    expect(weekly.unresolved_arcs).toEqual(['Which lake is warmer in June?']);
  });
});
