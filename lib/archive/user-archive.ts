/**
 * A user's memory as one archive: what `GET /v1/users/{u}/export` answers
 * and `POST /v1/users/{u}/import` restores, in another stage or after a forget.
 *
 * - `records`: every item of the user's partition as stored (turn index, signal state,
 *   Knowledge and staged records, summaries, graph, episodes, diary, tier entries and their
 *   audit trail, costs, logs, the search and knowledge indexes' pointers), one JSON object each;
 * - `documents`: every object under `users/{u}/` by its path below that prefix — the markdown
 *   documents (turns, Knowledge, summaries, diary, episodes, run logs) and JSON logs as text,
 *   the search index's segments (binary) in base64.
 *
 * What is not in it: the user's contributions to GLOBAL (GLOBAL's items), claim checks in
 * flight, rejected events, and the receipts of earlier forgets.
 */
import { keys, safeRelativePath, searchSegmentsFolder } from '../kernel/memory-paths.js';

export const ARCHIVE_FORMAT = 'reflective-memory/user-archive';

/** One object: its text, or (a search segment) its bytes in base64 — never free text, so never redacted. */
export type ArchiveDocument = { path: string; contentType?: string | undefined } & (
  | { text: string; base64?: undefined }
  | { base64: string; text?: undefined }
);

export interface UserArchive {
  format: typeof ARCHIVE_FORMAT;
  version: 1;
  userId: string;
  exportedAt: string;
  records: Array<Record<string, unknown>>;
  documents: ArchiveDocument[];
}

/** A DynamoDB set attribute of a record (no JSON form), as an archive holds it: `{"$set": [...]}`. */
export const ARCHIVE_SET = '$set';

const emptySet = (v: unknown): boolean =>
  v !== null &&
  typeof v === 'object' &&
  Array.isArray((v as Record<string, unknown>)[ARCHIVE_SET]) &&
  ((v as Record<string, unknown[]>)[ARCHIVE_SET]?.length ?? 0) === 0;

/** Objects kept as bytes, not text: the search index's segments (lib/search/search-segment.ts). */
export const isBinaryPath = (path: string): boolean => path.startsWith(searchSegmentsFolder);

/**
 * Why an archive cannot be restored as `userId`'s, by field, or none: it must be this user's
 * (an archive names its user in every record and key), every record in their partition, and
 * every document inside their prefix.
 */
export function archiveProblems(archive: UserArchive, userId: string): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  if (archive.userId !== userId)
    problems.push({
      path: 'body.archive.userId',
      message: `is ${archive.userId}: an archive is restored as the user it was exported from (${userId} asked)`,
    });
  archive.records.forEach((r, i) => {
    if (r.pk !== keys.userPk(userId))
      problems.push({ path: `body.archive.records.${i}.pk`, message: `must be ${keys.userPk(userId)}` });
    if (typeof r.sk !== 'string' || r.sk === '')
      problems.push({ path: `body.archive.records.${i}.sk`, message: 'must be a non-empty string' });
    for (const [k, v] of Object.entries(r))
      if (emptySet(v))
        problems.push({ path: `body.archive.records.${i}.${k}`, message: 'is an empty set: DynamoDB keeps none' });
  });
  archive.documents.forEach((d, i) => {
    if (safeRelativePath(d.path) !== d.path)
      problems.push({
        path: `body.archive.documents.${i}.path`,
        message: 'must be a path inside the user folder (no leading /, no . or .. segments)',
      });
  });
  return problems.slice(0, 20);
}
