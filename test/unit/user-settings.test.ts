/**
 * A user's own summary settings: what a change may say, what a stored
 * item is read as, and a threshold past SQS's 15-minute delay reached by rescheduling.
 */
import { describe, expect, it } from 'vitest';
import { idleCheck, scheduleIdleCheck } from '../../lib/signals/idle-rule.js';
import { initialSignalState } from '../../lib/signals/signal-state.js';
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import { readUserSettings, SettingsChangeSchema, withUserIdle } from '../../lib/settings/user-settings.js';

describe('user settings', () => {
  it('a change names known fields only, each a valid value or null', () => {
    expect(SettingsChangeSchema.parse({ idleMinutes: 30, prompt: null })).toEqual({ idleMinutes: 30, prompt: null });
    expect(SettingsChangeSchema.parse({})).toEqual({});
    expect(SettingsChangeSchema.safeParse({ colour: 'blue' }).success).toBe(false);
    expect(SettingsChangeSchema.safeParse({ idleMinutes: 1441 }).error?.issues[0]?.path).toEqual(['idleMinutes']);
    expect(SettingsChangeSchema.safeParse({ prompt: '   ' }).success).toBe(false);
  });

  it('reads a stored item field by field: what no longer validates follows the default', () => {
    expect(
      readUserSettings({ pk: 'USER#u', sk: 'SETTINGS', enabled: false, maxTokens: 'lots', idleMinutes: 20 }),
    ).toEqual({ enabled: false, idleMinutes: 20 });
    expect(readUserSettings(undefined)).toEqual({});
  });

  it("a user's 20 minutes: the check waits SQS's 15, reschedules itself for the rest, then finds the user idle", () => {
    const config = withUserIdle(defaultSignalConfig, { idleMinutes: 20 });
    const t0 = new Date('2026-02-06T14:00:00Z');
    const state = {
      ...initialSignalState(),
      lastTurnId: 5,
      lastSeenAt: t0.toISOString(),
      messagesSinceSummary: 5,
      summaryTurnIds: [1, 2, 3, 4, 5],
    };
    const scheduled = scheduleIdleCheck(state, config, t0);
    expect(scheduled?.plan.delaySeconds).toBe(900);
    const check = { lastTurnId: 5, dueAt: scheduled?.plan.dueAt as string };
    const at15 = idleCheck(scheduled!.state, check, config, new Date(t0.getTime() + 15 * 60_000));
    expect(at15).toEqual({ reschedule: { delaySeconds: 300 } });
    const at20 = idleCheck(scheduled!.state, check, config, new Date(t0.getTime() + 20 * 60_000));
    expect('trigger' in at20 && at20.trigger.kind).toBe('idle-summary');
    // The stage's 5 minutes would have fired at the first check.
    expect(
      'trigger' in idleCheck(scheduled!.state, check, defaultSignalConfig, new Date(t0.getTime() + 15 * 60_000)),
    ).toBe(true);
  });
});
