/**
 * A user's summary settings through the API (req R-SUM-8's configuration):
 * GET …/settings reads them, POST …/settings changes them (each change in the audit trail).
 * The pipeline reads them where they apply: the signal and idle functions the inactivity
 * threshold, the reflector the summary's switch, prompt and output cap.
 */
import type { SettingsChange } from './user-settings.js';
import type { AuditTrail } from '../items/memory-item.port.js';
import type { UserSettingsStore } from './user-settings.port.js';
import type { Clock } from '../kernel/runtime.port.js';

export async function readSettings(deps: { settings: UserSettingsStore }, userId: string) {
  return { settings: await deps.settings.get(userId) };
}

export async function changeSettings(
  deps: { settings: UserSettingsStore; audit: AuditTrail; clock: Clock },
  actor: string,
  userId: string,
  change: SettingsChange,
) {
  const settings = await deps.settings.update(userId, change);
  const changed = Object.entries(change).filter(([, v]) => v !== undefined);
  await deps.audit.append([
    {
      userId,
      itemId: 'settings',
      action: 'settings_change',
      actor,
      at: deps.clock.now().toISOString(),
      note: changed.map(([k, v]) => `${k}: ${v === null ? 'the stage default' : JSON.stringify(v)}`).join('; '),
    },
  ]);
  return { settings };
}
