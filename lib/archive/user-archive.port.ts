/** A user's records and documents, read and written whole. */
import type { ArchiveDocument } from './user-archive.js';

/** A user's records and documents, read and written whole (lib/archive/user-archive.ts). */
export interface UserArchiveStore {
  /** Every item of the user's partition, as stored. */
  records(userId: string): Promise<Array<Record<string, unknown>>>;
  /** Every object under the user's prefix, with its path below it. */
  documents(userId: string): Promise<ArchiveDocument[]>;
  putRecords(records: ReadonlyArray<Record<string, unknown>>): Promise<void>;
  putDocuments(userId: string, documents: readonly ArchiveDocument[]): Promise<void>;
}
