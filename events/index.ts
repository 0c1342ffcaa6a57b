import * as z from 'zod';
import { AgentEventSchema } from './agent-event.js';
import { IdleCheckSchema } from './idle-check.js';
import { JobSchema } from './job.js';
import { SessionClosedSchema } from './session-closed.js';
import { TurnClaimCheckSchema } from './turn-claim-check.js';
import { TurnSavedSchema } from './turn-saved.js';

export * from './agent-event.js';
export * from './common.js';
export * from './episode.js';
export * from './idle-check.js';
export * from './job.js';
export * from './session-closed.js';
export * from './turn-claim-check.js';
export * from './turn-saved.js';

/** What the TurnQueue carries: turns, session ends and agent events, told apart by `type`. */
export const TurnQueueMessageSchema = z.discriminatedUnion('type', [
  TurnSavedSchema,
  SessionClosedSchema,
  AgentEventSchema,
]);
export type TurnQueueMessage = z.infer<typeof TurnQueueMessageSchema>;

/** Every event and job contract, by the file name of its generated JSON Schema. */
export const contracts: ReadonlyArray<{ file: string; id: string; schema: z.ZodType }> = [
  { file: 'turn.saved.v1.json', id: 'turn.saved/v1', schema: TurnSavedSchema },
  { file: 'turn.saved.claim-check.v1.json', id: 'turn.saved.claim-check/v1', schema: TurnClaimCheckSchema },
  { file: 'session.closed.v1.json', id: 'session.closed/v1', schema: SessionClosedSchema },
  { file: 'agent.event.v1.json', id: 'agent.event/v1', schema: AgentEventSchema },
  { file: 'reflector.job.v1.json', id: 'reflector.job/v1', schema: JobSchema },
  { file: 'idle.check.v1.json', id: 'idle.check/v1', schema: IdleCheckSchema },
];
