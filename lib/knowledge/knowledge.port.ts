/** Ports of the knowledge: staged records, promoted Knowledge and its index, and the expiry log. */
import type { KnowledgeDoc } from './knowledge.js';
import type { StagedRecord } from './promotion.js';
import type { StagedDocument } from './staging.js';
import type { ModelResponse } from '../model/language-model.port.js';

/** What one change to the knowledge index does. */
export interface KnowledgeIndexChange<R> {
  /** The index after the change (the whole of it); omitted: nothing to write. */
  docs?: readonly KnowledgeDoc[];
  /** Documents to delete first (paths relative to Knowledge/). */
  remove?: readonly string[];
  result: R;
}

/** A Knowledge document to write: its path under Knowledge/, its markdown and its index entry. */
export interface KnowledgeEntry {
  path: string;
  markdown: string;
  doc: KnowledgeDoc;
}

export interface KnowledgeStore {
  /** The user's promoted Knowledge: its search-index snapshot. */
  loadKnowledge(userId: string): Promise<KnowledgeDoc[]>;
  /** Every staged record of the user (staged and already promoted). */
  listStaged(userId: string): Promise<StagedRecord[]>;
  /** These staged records by path (those that exist). */
  stagedRecords(userId: string, paths: readonly string[]): Promise<StagedRecord[]>;
  /**
   * One page of the user's staged records in path order, after `after` (a path); a read of at
   * most `limit` records whatever the history, so a page may hold fewer than `limit` when only
   * undecided ones are asked for. `next` is the last path read, absent on the last page.
   */
  stagedPage(
    userId: string,
    page: { limit: number; after?: string | undefined; undecidedOnly: boolean },
  ): Promise<{ records: StagedRecord[]; next?: string }>;
  /** Stage new documents; a record already at the same path is left as it is. Returns the staged files. */
  putStaged(userId: string, docs: readonly StagedDocument[], batchId: string): Promise<string[]>;
  /** Count one batch's recurrence of a staged record, once per batch; returns the record as it is now. */
  reinforce(userId: string, path: string, batchId: string): Promise<StagedRecord>;
  /** Move a staged record to Knowledge/ (idempotent): write the document, index it, retire the staged file. */
  promote(
    userId: string,
    record: StagedRecord,
    knowledgePath: string,
    markdown: string,
    doc: KnowledgeDoc,
  ): Promise<void>;
  /** Mark a staged record promoted into this Knowledge path and retire its staged file (idempotent). */
  settlePromoted(userId: string, record: StagedRecord, knowledgePath: string): Promise<void>;
  /** Rewrite a Knowledge document's file from what it holds now (null: no file); the index is not touched. */
  rewriteKnowledgeFile(userId: string, path: string, render: (current: string | null) => string): Promise<void>;
  /** Write Knowledge documents and index them in one change of the index (idempotent by path). */
  putKnowledge(userId: string, entries: ReadonlyArray<KnowledgeEntry>): Promise<void>;
  /** Write Knowledge documents' files only (idempotent by path); a change of the index that follows names them. */
  writeKnowledgeFiles(userId: string, entries: ReadonlyArray<KnowledgeEntry>): Promise<void>;
  /**
   * Change the index: `change` gets the current documents and says what they become. The
   * index is written by the reflector and the API at once, so `change` may run again on a
   * newer index when another writer got there first — it must be a pure function of its
   * argument. Returns the result of the run whose change was written.
   */
  updateKnowledgeIndex<R>(
    userId: string,
    change: (docs: readonly KnowledgeDoc[]) => KnowledgeIndexChange<R>,
  ): Promise<R>;
  /** Staged (not promoted) records of every user staged on a UTC day (the expiry sweep's index). */
  stagedOn(day: string): Promise<Array<{ userId: string; record: StagedRecord }>>;
  /** Delete a staged record and its file. */
  deleteStaged(userId: string, path: string): Promise<void>;
  /** A reviewer's decision; a discarded record is kept (status `discarded`) and its staged file removed. */
  recordReview(userId: string, path: string, review: NonNullable<StagedRecord['review']>): Promise<void>;
  /** The model output an earlier delivery of the same batch recorded, if any. */
  getModelOutput(userId: string, batchId: string): Promise<ModelResponse | null>;
  putModelOutput(userId: string, batchId: string, response: ModelResponse): Promise<void>;
  /** Write an episode's document (idempotent by turn); returns its key. */
  putEpisode(userId: string, turnId: number, markdown: string): Promise<string>;
  /** Write an agent.event episode's document (idempotent by episode id); returns its key. */
  putEventEpisode(userId: string, episodeId: string, markdown: string): Promise<string>;
  /** Write a diary entry (idempotent by batch); returns its key. */
}

/** Where each sweep's deletions are logged, with their reasons. */
export interface ExpiryLog {
  write(
    userId: string,
    sweptAt: string,
    deletions: Array<{ path: string; stagedAt: string; promotionCount: number; reason: string }>,
  ): Promise<void>;
}
