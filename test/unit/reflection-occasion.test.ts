/** An agent.event's kind and detail go into the batch prompt. */
import { describe, expect, it } from 'vitest';
import { AgentEventTriggerSchema } from '../../events/agent-event.js';
import {
  assembleBatch,
  buildReflectorPrompt,
  EVENT_INSTRUCTIONS,
  occasionOf,
} from '../../lib/batches/batch-assembly.js';
import { parseReflectorPrompt } from '../../lib/offline-model/rule-reflector.js';
import { turn } from '../../lib/turns/turn.fake.js';

describe('why a batch runs now', () => {
  it('has an instruction for every agent.event kind, and none for other triggers', () => {
    expect(Object.keys(EVENT_INSTRUCTIONS).sort()).toEqual([...AgentEventTriggerSchema.options].sort());
    expect(occasionOf({ trigger: 'event:error', eventDetail: 'timeout calling the weather tool' })).toEqual({
      trigger: 'error',
      detail: 'timeout calling the weather tool',
    });
    expect(occasionOf({ trigger: 'turn_count' })).toBeNull();
    expect(occasionOf({ trigger: 'event:unknown' })).toBeNull();
  });

  it('opens the prompt with the instruction and the detail, and the turns and knowledge read back the same', () => {
    const batch = assembleBatch([turn({ turnId: 1, query: 'The forecast tool failed again.', response: 'Sorry.' })]);
    const existing = [{ path: 'Facts/a.md', summary: 'a' }];
    const p = buildReflectorPrompt(batch, existing, { trigger: 'error', detail: 'timeout\n calling the weather tool' });
    expect(
      p.startsWith(
        `## Why now\n${EVENT_INSTRUCTIONS.error}\nThe agent's note (error): timeout calling the weather tool\n\n## Existing knowledge\n`,
      ),
    ).toBe(true);
    expect(parseReflectorPrompt(p)).toEqual(parseReflectorPrompt(buildReflectorPrompt(batch, existing)));
  });
});
