/** In-memory user settings for tests. */
import type { SettingsChange, UserSettings } from './user-settings.js';
import type { UserSettingsStore } from './user-settings.port.js';

export class MemorySettings implements UserSettingsStore {
  readonly byUser = new Map<string, UserSettings>();
  async get(userId: string) {
    return { ...(this.byUser.get(userId) ?? {}) };
  }
  async update(userId: string, change: SettingsChange) {
    const next: Record<string, unknown> = { ...(this.byUser.get(userId) ?? {}) };
    for (const [k, v] of Object.entries(change)) {
      if (v === null) delete next[k];
      else if (v !== undefined) next[k] = v;
    }
    this.byUser.set(userId, next as UserSettings);
    return { ...(next as UserSettings) };
  }
}
