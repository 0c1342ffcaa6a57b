import type { z } from 'zod';
import { ReflectionJobSchema } from './reflection-job.js';
import { TurnSavedSchema } from './turn-saved.js';

export * from './common.js';
export * from './reflection-job.js';
export * from './turn-saved.js';

/** Every event and job contract, by the file name of its generated JSON Schema. */
export const contracts: ReadonlyArray<{ file: string; id: string; schema: z.ZodType }> = [
  { file: 'turn.saved.v1.json', id: 'turn.saved/v1', schema: TurnSavedSchema },
  { file: 'reflection.job.v1.json', id: 'reflection.job/v1', schema: ReflectionJobSchema },
];
