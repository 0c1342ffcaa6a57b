/** The answer-level LoCoMo evaluation's own parts (bench/locomo-eval.ts): prompts, verdicts, token F1. */
import { describe, expect, it } from 'vitest';
import { answerPrompt, judgePrompt, tokenF1, verdictOf } from '../../bench/locomo-eval.js';

describe('the LoCoMo answer evaluation', () => {
  it('scores token F1 as LoCoMo does: lower case, punctuation and articles dropped, each gold word matched once', () => {
    expect(tokenF1('The 7 May, 2023', '7 May 2023')).toBe(1);
    expect(tokenF1('pottery', 'pottery and painting')).toBeCloseTo(2 / 3, 5);
    expect(tokenF1('dog dog dog', 'dog')).toBeCloseTo(0.5, 5);
    expect(tokenF1('not mentioned', 'Sweden')).toBe(0);
    expect(tokenF1('', '')).toBe(1);
  });

  it('gives the model the memories best first with their dates, and the judge the gold answer', () => {
    const prompt = answerPrompt('When did Ann move?', [
      { text: 'Ann: we moved\nto Lisbon', createdAt: '2023-05-07T10:00:00Z' },
      { text: 'no date here' },
    ]);
    expect(prompt).toBe(
      'Memories:\n[1] (2023-05-07) Ann: we moved to Lisbon\n[2] no date here\n\nQuestion: When did Ann move?\nAnswer:',
    );
    expect(judgePrompt('Q?', 'gold', 'given')).toContain('Gold answer: gold');
  });

  it('takes a verdict only from the tool input, and none from anything else', () => {
    expect(verdictOf({ correct: true })).toBe(true);
    expect(verdictOf({ correct: false })).toBe(false);
    expect(verdictOf({ correct: 'yes' })).toBeNull();
    expect(verdictOf('CORRECT')).toBeNull();
    expect(verdictOf(null)).toBeNull();
  });
});
