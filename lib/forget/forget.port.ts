/** Ports of forgetting: receipts, erasers, tombstones and the turns forgotten by provenance. */
import type { Tombstone } from './tombstone.js';

/** What a forget erased, per store (counts only: a receipt holds no content). */
export interface ForgetCounts {
  /** Items of the user's partition (DynamoDB), the signal state included. */
  items: number;
  /** Object versions and delete markers under the user's prefixes (S3). */
  objects: number;
  /** The user's contributions to GLOBAL (items shared from theirs). */
  globalItems: number;
  /** Old versions of GLOBAL's search segments that held them. */
  globalIndexObjects: number;
}

/** The receipt of a user's erasure, kept outside the user's partition as its audit record. */
export interface ForgetReceipt {
  userId: string;
  /** When the forget was asked for: turns and jobs from before it are dropped wherever they arrive. */
  requestedAt: string;
  requestedBy: string;
  status: 'pending' | 'done';
  completedAt?: string;
  counts: ForgetCounts;
}

export interface ForgetLog {
  /** The user's newest receipt, if they were ever forgotten (a consistent read). */
  latest(userId: string): Promise<ForgetReceipt | null>;
  /** Record a new request (first write wins: a retry of the same request keeps the receipt). */
  request(receipt: ForgetReceipt): Promise<void>;
  /** Add what one page of the erasure removed (ADD: pages of a resumed erasure add up). */
  add(userId: string, requestedAt: string, counts: Partial<ForgetCounts>): Promise<void>;
  complete(userId: string, requestedAt: string, completedAt: string): Promise<void>;
}

/** Deletes what a user left behind, a page at a time; each call may be repeated. */
export interface UserEraser {
  /** Ids of the user's API-written items (MEM#), whose GLOBAL copies share their id. */
  memoryItemIds(userId: string): Promise<string[]>;
  /** Delete these GLOBAL items that exist (and mark them changed for GLOBAL's index): how many there were. */
  deleteGlobalItems(ids: readonly string[]): Promise<number>;
  /** The signal state first: a turn that arrives later finds no state and checks the receipts. */
  deleteSignalState(userId: string): Promise<void>;
  /** Every item of the user's partition, a page at a time; `page` is told each page's count. */
  deleteItems(userId: string, page: (deleted: number) => Promise<void>): Promise<void>;
  /** Every version and delete marker under `prefix`, a page at a time. */
  deleteObjectVersions(prefix: string, page: (deleted: number) => Promise<void>): Promise<void>;
  /** The versions under `prefix` that are not current (old and deleted objects' versions, delete markers). */
  deleteNoncurrentVersions(prefix: string): Promise<number>;
}

/**
 * What deletions leave behind so that nothing brings the items back (req R-DEL-2, R-DEL-4):
 * tombstones of deleted facts (keys only, lib/forget/tombstone.ts) and the turns forgotten by
 * provenance, which queued jobs consult before they write.
 */
export interface ErasureLog {
  /** Bury these tombstones (idempotent). */
  bury(userId: string, tombstones: readonly Tombstone[], at: string): Promise<void>;
  /** Those of `keys` that are buried, by key. */
  buried(userId: string, keys: readonly string[]): Promise<Map<string, Tombstone>>;
  /** Record these turns as forgotten (idempotent, a set that only grows). */
  forgetTurns(userId: string, turnIds: readonly number[], at: string): Promise<void>;
  /** Every turn of the user forgotten by provenance. */
  forgottenTurns(userId: string): Promise<Set<number>>;
}

/** Hard deletion of one user's records and objects, every version of them (req R-DEL-1, R-DEL-3). */
export interface ItemEraser {
  /** The user's turns of a session, ascending; at most `limit` + 1, so the caller can tell the session is larger. */
  sessionTurns(userId: string, sessionId: string, limit: number): Promise<number[]>;
  /** Delete these records (sort keys in the user's partition), then mark these item ids changed for the search index. */
  deleteRecords(userId: string, sortKeys: readonly string[], changedIds: readonly string[]): Promise<void>;
  /** Delete every version and delete marker of the objects whose keys begin with these prefixes; returns how many. */
  deleteObjects(prefixes: readonly string[]): Promise<number>;
}
