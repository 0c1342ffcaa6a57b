/**
 * Ports: what the use cases need from the outside world. Adapters in lib/adapters
 * implement them with AWS SDK clients; unit tests pass in-memory fakes.
 */
import type { ArchiveDocument } from './domain/user-archive.js';
import type { SettingsChange, UserSettings } from './domain/user-settings.js';

/** A user's own summary settings (lib/domain/user-settings.ts); unset fields follow the stage's. */
export interface UserSettingsStore {
  get(userId: string): Promise<UserSettings>;
  /** Set the fields the change names, clear those it sets to null; returns the settings as they are now. */
  update(userId: string, change: SettingsChange): Promise<UserSettings>;
}

/** A user's records and documents, read and written whole (lib/domain/user-archive.ts). */
export interface UserArchiveStore {
  /** Every item of the user's partition, as stored. */
  records(userId: string): Promise<Array<Record<string, unknown>>>;
  /** Every object under the user's prefix, with its path below it. */
  documents(userId: string): Promise<ArchiveDocument[]>;
  putRecords(records: ReadonlyArray<Record<string, unknown>>): Promise<void>;
  putDocuments(userId: string, documents: readonly ArchiveDocument[]): Promise<void>;
}
