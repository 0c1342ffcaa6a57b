/**
 * Export and import of a user's memory (the archive: lib/archive/user-archive.ts).
 *
 * Both travel in one API request: Lambda answers and takes at most 6 MB synchronously
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html, "Invocation
 * payload"), so an archive over MAX_ARCHIVE_BYTES is refused (too_large: 413 at the API) — months of a heavy user's
 * history need an export to S3, which is not built.
 *
 * An import restores into a user with no signal state (a new user, or one just forgotten):
 * documents first, then records, the signal state last. Until that last write the user still
 * has no state, so an import that failed part way is asked again and rewrites the same keys;
 * once it is written, another import is refused (a conflict: 409 at the API).
 */
import { GLOBAL_USER } from '../items/memory-item.js';
import { ARCHIVE_FORMAT, archiveProblems, type UserArchive } from './user-archive.js';
import type { Clock } from '../kernel/runtime.port.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import type { UserArchiveStore } from './user-archive.port.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';

/** Below Lambda's 6 MB synchronous payload, with room for the answer's envelope. */
export const MAX_ARCHIVE_BYTES = 5 * 1024 * 1024;

export interface ArchiveDeps {
  archives: UserArchiveStore;
  signalState: Pick<SignalStateStore, 'load'>;
  clock: Clock;
}

const refuseGlobal = (userId: string) => {
  if (userId === GLOBAL_USER)
    throw new MemoryApiError('invalid', 'userId: GLOBAL is shared by every user, not exported or imported as one', [
      { path: 'params.userId', message: 'must not be GLOBAL' },
    ]);
};

/** `GET /v1/users/{u}/export`: everything the user has, as one archive. */
export async function exportUser(deps: ArchiveDeps, userId: string): Promise<{ archive: UserArchive }> {
  refuseGlobal(userId);
  const [records, documents] = await Promise.all([deps.archives.records(userId), deps.archives.documents(userId)]);
  const archive: UserArchive = {
    format: ARCHIVE_FORMAT,
    version: 1,
    userId,
    exportedAt: deps.clock.now().toISOString(),
    records,
    documents,
  };
  const bytes = Buffer.byteLength(JSON.stringify(archive));
  if (bytes > MAX_ARCHIVE_BYTES) {
    throw new MemoryApiError(
      'too_large',
      `the archive of ${userId} is ${(bytes / 1048576).toFixed(1)} MB, more than one response carries (${MAX_ARCHIVE_BYTES / 1048576} MB); an export to S3 is not built yet`,
    );
  }
  return { archive };
}

/** `POST /v1/users/{u}/import`: restore an archive of this user into a user with no memory yet. */
export async function importUser(
  deps: ArchiveDeps,
  userId: string,
  archive: UserArchive,
): Promise<{ imported: { records: number; documents: number } }> {
  refuseGlobal(userId);
  const problems = archiveProblems(archive, userId);
  if (problems.length > 0)
    throw new MemoryApiError('invalid', `the archive cannot be restored as ${userId}'s`, problems);
  if ((await deps.signalState.load(userId)).version !== null)
    throw new MemoryApiError(
      'conflict',
      `user ${userId} has memory already: an archive is imported into a new or forgotten user`,
    );
  await deps.archives.putDocuments(userId, archive.documents);
  await deps.archives.putRecords(archive.records);
  return { imported: { records: archive.records.length, documents: archive.documents.length } };
}
