/**
 * Req R-EVT-4: a reflection carries an assessment (confidence, caution, sentiment), kept
 * with the batch log; a malformed one is dropped without costing the batch its items.
 */
import { describe, expect, it } from 'vitest';
import { parseBatchAnswer, reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';

const fact = { title: 'reef_tank', content: 'The user keeps a reef tank.', source_turns: [1], category: 'Facts' };

describe('emotion state (req R-EVT-4)', () => {
  it('is an optional part of the tool the model fills, with its ranges', () => {
    const schema = reflectionToolInputSchema() as {
      properties: Record<string, { properties?: Record<string, { minimum?: number; maximum?: number }> }>;
      required?: string[];
    };
    expect(schema.required ?? []).not.toContain('assessment');
    expect(schema.properties.assessment?.properties?.sentiment).toMatchObject({ minimum: -1, maximum: 1 });
    expect(schema.properties.assessment?.properties?.caution).toMatchObject({ minimum: 0, maximum: 1 });
  });

  it('is read from the answer, rounded, and absent when the model gave none', () => {
    const out = parseBatchAnswer({
      new_facts: [fact],
      assessment: { confidence: 0.8123, caution: 0.2, sentiment: -0.456 },
    });
    expect(out.assessment).toEqual({ confidence: 0.81, caution: 0.2, sentiment: -0.46 });
    expect(parseBatchAnswer({ new_facts: [fact] })).toMatchObject({ assessment: null, assessmentInvalid: false });
  });

  it('is dropped when malformed, and the items still count', () => {
    const out = parseBatchAnswer(JSON.stringify({ new_facts: [fact], assessment: { confidence: 7, caution: 'high' } }));
    expect(out).toMatchObject({ assessment: null, assessmentInvalid: true });
    expect(out.output.new_facts).toHaveLength(1);
  });
});
