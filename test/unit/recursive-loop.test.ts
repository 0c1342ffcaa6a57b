import { describe, expect, it } from 'vitest';
import { invocationLineage, parseTraceHeader, traceHeader } from '../../infra/local/recursive-loop.js';

describe('the chain of requests the local event sources count (infra/local/recursive-loop.ts)', () => {
  it('reads back the counts it writes, and none from a header without them', () => {
    expect(parseTraceHeader(traceHeader({ 'rm-signal': 1, 'rm-idle': 16 }))).toEqual({ 'rm-signal': 1, 'rm-idle': 16 });
    expect(parseTraceHeader(undefined)).toEqual({});
    expect(parseTraceHeader('Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0')).toEqual({});
  });

  it("counts an invocation once more than its batch's highest count for the function, keeping the others' counts", () => {
    expect(invocationLineage([{}], 'rm-idle')).toEqual({ 'rm-idle': 1 });
    expect(invocationLineage([{ 'rm-signal': 1, 'rm-idle': 3 }, { 'rm-idle': 7 }], 'rm-idle')).toEqual({
      'rm-signal': 1,
      'rm-idle': 8,
    });
    expect(invocationLineage([{ 'rm-idle': 4 }], 'rm-reflector')).toEqual({ 'rm-idle': 4, 'rm-reflector': 1 });
  });
});
