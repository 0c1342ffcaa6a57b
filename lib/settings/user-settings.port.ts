/** A user's own settings' store. */
import type { SettingsChange, UserSettings } from './user-settings.js';

/** A user's own summary settings (lib/settings/user-settings.ts); unset fields follow the stage's. */
export interface UserSettingsStore {
  get(userId: string): Promise<UserSettings>;
  /** Set the fields the change names, clear those it sets to null; returns the settings as they are now. */
  update(userId: string, change: SettingsChange): Promise<UserSettings>;
}
