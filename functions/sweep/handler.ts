/**
 * sweep — fired by the EventBridge schedules (nightly, weekly, expiry, archive).
 * The sweeps themselves are not built yet (issue "Sleep-time compute"): this handler
 * validates the schedule's input and logs that the sweep ran with nothing to do, so the
 * schedules and their wiring can be deployed and watched today.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { z } from 'zod';
import { createLogger } from '../../lib/adapters/logger.js';

export const SweepInputSchema = z.object({ sweep: z.enum(['nightly', 'weekly', 'expiry', 'archive']) });
export type SweepInput = z.infer<typeof SweepInputSchema>;

const { logger } = createLogger('sweep');

export const handler = middy(async (event: unknown): Promise<{ sweep: SweepInput['sweep']; status: 'not_implemented' }> => {
  const input = SweepInputSchema.parse(event);
  logger.warn('sweep fired but is not implemented yet', { sweep: input.sweep });
  return { sweep: input.sweep, status: 'not_implemented' };
}).use(injectLambdaContext(logger));
