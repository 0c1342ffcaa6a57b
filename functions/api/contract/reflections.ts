/** What reflection and sleep time wrote, and its review: sleep-time runs, summaries, the diary, staged items. */
import * as z from 'zod';
import { Limit, Looseobject, type Route, USER_PATH as u, UserParam } from './shared.js';

export const ReviewRequestSchema = z
  .object({ path: z.string().min(1).max(600), reason: z.string().min(1).max(1000).optional() })
  .strict();
/** Req R-SUM-9's manual summary: the instruction for this summary (the user's or the stage's when absent). */
export const SummaryRequestSchema = z
  .object({
    prompt: z.string().min(1).max(4000).optional(),
    /** Also reflect now on the turns no batch has taken yet (an agent.event, trigger user_request). */
    reflect: z.boolean().optional(),
  })
  .strict();

export const reflectionRoutes = [
  {
    method: 'GET',
    path: `${u}/sleep-time/runs`,
    operationId: 'sleepTimeRuns',
    access: 'read',
    params: UserParam,
    query: z.object({ limit: Limit(500, 20) }),
    summary: 'The sleep-time run log: nightly and weekly runs, newest first',
    response: z.object({ runs: z.array(Looseobject) }),
  },
  {
    method: 'GET',
    path: `${u}/sleep-time/runs/latest`,
    operationId: 'sleepTimeLatest',
    access: 'read',
    params: UserParam,
    summary: 'The most recent sleep-time run (nightly or weekly)',
    response: z.object({ run: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/summaries/quality`,
    operationId: 'summaryQuality',
    access: 'read',
    params: UserParam,
    summary:
      "Req R-SUM-10's summary quality metrics: summaries deleted (high: inaccurate), resurrected by search or retrieve (high: useful), resurrected while deleted (must stay 0), the topics they cover",
    response: z.object({ quality: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/sleep-time/assessment`,
    operationId: 'sleepTimeAssessment',
    access: 'read',
    params: UserParam,
    query: z.object({ days: Limit(365, 30) }),
    summary: 'Self-assessment over the nightly runs (rates and trend) with one point per run',
    response: Looseobject,
  },
  {
    method: 'GET',
    path: `${u}/summaries`,
    operationId: 'summaryList',
    access: 'read',
    params: UserParam,
    query: z.object({ includeDeleted: z.enum(['true', 'false']).default('false'), limit: Limit(500, 50) }),
    summary:
      'Context summaries (turn pairs written after inactivity): the newest `limit`, newest first by the turns they cover (the last turn, then the id)',
    response: z.object({ summaries: z.array(Looseobject) }),
  },
  {
    method: 'POST',
    path: `${u}/summaries`,
    operationId: 'summaryRequest',
    access: 'write',
    params: UserParam,
    body: SummaryRequestSchema,
    summary:
      'A summary now (req R-SUM-9 manual summary), with its own prompt if given, over the turns since the last summary (or those the last one covered); answers the job id, the summary follows in GET …/summaries',
    response: z.object({
      jobId: z.string(),
      turnIds: z.array(z.number()),
      /** With `reflect` asked for: true when a batch reflection was sent for, false (with `reason`) when there was nothing to reflect on. */
      reflect: z.boolean().optional(),
      reason: z.string().optional(),
    }),
  },
  {
    method: 'POST',
    path: `${u}/summaries/{id}`,
    operationId: 'summaryEdit',
    access: 'write',
    params: UserParam.extend({ id: z.string().min(1).max(200) }),
    body: z.object({ text: z.string().trim().min(1).max(32_000), reason: z.string().max(1000).optional() }).strict(),
    summary:
      "Edit a summary's text (req R-SUM-6, R-SUM-7: the user's correction of the AI's understanding); the old text is kept in the record's `edits`",
    response: z.object({ summary: Looseobject }),
  },
  {
    method: 'DELETE',
    path: `${u}/summaries/{id}`,
    operationId: 'summaryDelete',
    access: 'write',
    params: UserParam.extend({ id: z.string().min(1).max(200) }),
    summary: 'Soft-delete a summary: it is kept for audit and never returned by search again',
    response: z.object({ id: z.string(), deleted: z.boolean() }),
  },
  {
    method: 'GET',
    path: `${u}/diary`,
    operationId: 'diaryList',
    access: 'read',
    params: UserParam,
    query: z.object({
      limit: Limit(100, 20),
      nextToken: z.string().min(1).max(2048).optional(),
      type: z.enum(['reflection', 'observation']).optional(),
      include: z.enum(['visible', 'all']).default('visible'),
    }),
    summary:
      'The diary (req R-EVT, R-DIARY), newest first: observations the impact criteria wrote and reflections on agent.events (trigger, insight, recommendation, confidence, emotion state); `include=all` adds the rejected attempts',
    response: z.object({ entries: z.array(Looseobject), nextToken: z.string().optional() }),
  },
  {
    method: 'POST',
    path: `${u}/diary`,
    operationId: 'diaryWrite',
    access: 'write',
    params: UserParam,
    body: z
      .object({
        text: z.string().trim().min(1).max(4000),
        turns: z.array(z.number().int().min(0)).max(100).optional(),
      })
      .strict(),
    summary:
      'Write a diary entry by hand (seed 004 M3: manual entries are always written, whatever the criteria): placed after the ' +
      "user's latest turn, audited (`create`), found by search; the same text after the same turn is one entry",
    response: z.object({ entry: Looseobject }),
  },
  {
    method: 'POST',
    path: `${u}/diary/{id}`,
    operationId: 'diaryOverride',
    access: 'write',
    params: UserParam.extend({ id: z.string().min(1).max(200) }),
    body: z.object({ decision: z.enum(['keep', 'drop']), reason: z.string().max(1000).optional() }).strict(),
    summary: 'A person keeps a diary entry the criteria rejected, or drops one they wrote (audited; search follows)',
    response: z.object({ entry: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/review/staged`,
    operationId: 'reviewList',
    access: 'read',
    params: UserParam,
    query: z.object({
      includeDecided: z.enum(['true', 'false']).default('false'),
      limit: Limit(200, 50),
      nextToken: z.string().min(1).max(2048).optional(),
    }),
    summary:
      'Staged items with their gate history, a page at a time in path order (a page reads at most `limit` records; without includeDecided it shows the undecided among them, so it can hold fewer)',
    response: z.object({ staged: z.array(Looseobject), nextToken: z.string().optional() }),
  },
  {
    method: 'POST',
    path: `${u}/review/promote`,
    operationId: 'reviewPromote',
    access: 'write',
    params: UserParam,
    body: ReviewRequestSchema,
    summary: 'Promote a staged item to Knowledge now',
    response: z.object({ knowledgePath: z.string() }),
  },
  {
    method: 'POST',
    path: `${u}/review/discard`,
    operationId: 'reviewDiscard',
    access: 'write',
    params: UserParam,
    body: ReviewRequestSchema,
    summary: 'Discard a staged item (it is kept, so the same knowledge is not staged again)',
    response: z.object({ path: z.string(), status: z.literal('discarded') }),
  },
] as const satisfies readonly Route[];
