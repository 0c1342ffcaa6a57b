/** In-memory knowledge and expiry log for tests, with recording variants. */
import type { KnowledgeDoc } from './knowledge.js';
import {
  episodeKey,
  eventEpisodeKey,
  keys,
  knowledgePrefix,
  modelOutputKey,
  stagingPrefix,
} from '../kernel/memory-paths.js';
import type { StagedRecord } from './promotion.js';
import type { StagedDocument } from './staging.js';
import type { KnowledgeEntry, KnowledgeIndexChange, ExpiryLog, KnowledgeStore } from './knowledge.port.js';
import type { ModelResponse } from '../model/language-model.port.js';
import type { WriteLog } from '../kernel/write-log.fake.js';

export class MemoryKnowledgeStore implements KnowledgeStore {
  readonly knowledge = new Map<string, KnowledgeDoc>();
  readonly knowledgeFiles = new Map<string, string>();
  readonly staged = new Map<string, string>();
  readonly records = new Map<string, StagedRecord>();
  readonly outputs = new Map<string, ModelResponse>();
  async loadKnowledge() {
    return [...this.knowledge.values()];
  }
  async listStaged(userId: string) {
    return [...this.records.entries()].filter(([k]) => k.startsWith(`${userId}/`)).map(([, r]) => structuredClone(r));
  }
  async stagedRecords(userId: string, paths: readonly string[]) {
    return (await this.listStaged(userId)).filter((r) => paths.includes(r.path));
  }
  async stagedPage(userId: string, page: { limit: number; after?: string | undefined; undecidedOnly: boolean }) {
    const all = (await this.listStaged(userId))
      .sort((a, b) => (a.path < b.path ? -1 : 1))
      .filter((r) => page.after === undefined || r.path > page.after);
    const read = all.slice(0, page.limit);
    const records = read.filter((r) => !page.undecidedOnly || r.status === 'staged');
    return { records, ...(all.length > page.limit ? { next: read.at(-1)?.path as string } : {}) };
  }
  async putStaged(userId: string, docs: readonly StagedDocument[], batchId: string) {
    for (const d of docs) {
      this.staged.set(`${userId}/${d.path}`, d.markdown);
      if (!this.records.has(`${userId}/${d.path}`)) {
        this.records.set(`${userId}/${d.path}`, {
          path: d.path,
          kind: d.kind,
          title: d.title,
          category: d.category,
          text: d.text,
          confidence: d.confidence,
          sourceTurns: d.sourceTurns,
          batchId,
          stagedAt: String(d.meta.staged_at),
          meta: d.meta,
          body: d.body,
          promotedBy: [],
          status: 'staged',
        });
      }
    }
    return docs.map((d) => `Knowledge_staging/${d.path}`);
  }
  async reinforce(userId: string, path: string, batchId: string) {
    const r = this.records.get(`${userId}/${path}`);
    if (!r) throw new Error(`no staged ${path}`);
    if (!r.promotedBy.includes(batchId)) r.promotedBy.push(batchId);
    return structuredClone(r);
  }
  async putKnowledge(userId: string, entries: ReadonlyArray<KnowledgeEntry>) {
    for (const { path, markdown, doc } of entries) {
      this.knowledgeFiles.set(`${userId}/${path}`, markdown);
      this.knowledge.set(doc.id, doc);
    }
  }
  async writeKnowledgeFiles(userId: string, entries: ReadonlyArray<KnowledgeEntry>) {
    for (const { path, markdown } of entries) this.knowledgeFiles.set(`${userId}/${path}`, markdown);
  }
  async updateKnowledgeIndex<R>(
    userId: string,
    change: (docs: readonly KnowledgeDoc[]) => KnowledgeIndexChange<R>,
  ): Promise<R> {
    const next = change([...this.knowledge.values()].map((d) => structuredClone(d)));
    if (next.docs === undefined) return next.result;
    for (const path of next.remove ?? []) this.knowledgeFiles.delete(`${userId}/${path}`);
    this.knowledge.clear();
    for (const d of next.docs) this.knowledge.set(d.id, structuredClone(d));
    return next.result;
  }
  async stagedOn(day: string) {
    return [...this.records.entries()]
      .filter(([, r]) => r.status === 'staged' && r.stagedAt.slice(0, 10) === day)
      .map(([k, r]) => ({ userId: k.slice(0, k.indexOf('/')), record: structuredClone(r) }));
  }
  async deleteStaged(userId: string, path: string) {
    this.records.delete(`${userId}/${path}`);
    this.staged.delete(`${userId}/${path}`);
  }
  async promote(userId: string, record: StagedRecord, knowledgePath: string, markdown: string, doc: KnowledgeDoc) {
    await this.putKnowledge(userId, [{ path: knowledgePath, markdown, doc }]);
    await this.settlePromoted(userId, record, knowledgePath);
  }
  async rewriteKnowledgeFile(userId: string, path: string, render: (current: string | null) => string) {
    this.knowledgeFiles.set(`${userId}/${path}`, render(this.knowledgeFiles.get(`${userId}/${path}`) ?? null));
  }
  async settlePromoted(userId: string, record: StagedRecord, knowledgePath: string) {
    const r = this.records.get(`${userId}/${record.path}`);
    if (r) Object.assign(r, { status: 'promoted', knowledgePath });
    this.staged.delete(`${userId}/${record.path}`);
  }
  async recordReview(userId: string, path: string, review: NonNullable<StagedRecord['review']>) {
    const r = this.records.get(`${userId}/${path}`);
    if (!r) throw new Error(`no staged ${path}`);
    r.review = review;
    if (review.decision === 'discarded') {
      r.status = 'discarded';
      this.staged.delete(`${userId}/${path}`);
    }
  }
  async getModelOutput(userId: string, batchId: string) {
    return this.outputs.get(`${userId}/${batchId}`) ?? null;
  }
  async putModelOutput(userId: string, batchId: string, r: ModelResponse) {
    this.outputs.set(`${userId}/${batchId}`, r);
  }
  readonly episodes = new Map<string, string>();
  async putEpisode(userId: string, turnId: number, markdown: string) {
    const key = episodeKey(userId, turnId);
    this.episodes.set(key, markdown);
    return key;
  }
  async putEventEpisode(userId: string, episodeId: string, markdown: string) {
    const key = eventEpisodeKey(userId, episodeId);
    this.episodes.set(key, markdown);
    return key;
  }
}

export class MemoryExpiryLog implements ExpiryLog {
  readonly entries: Array<{ userId: string; sweptAt: string; deletions: Parameters<ExpiryLog['write']>[2] }> = [];
  async write(userId: string, sweptAt: string, deletions: Parameters<ExpiryLog['write']>[2]) {
    this.entries.push({ userId, sweptAt, deletions });
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingKnowledgeStore extends MemoryKnowledgeStore {
  /** Promoted Knowledge per user (the base fake keeps one map for everybody). */
  readonly docsByUser = new Map<string, Map<string, KnowledgeDoc>>();
  constructor(private readonly log: WriteLog) {
    super();
  }
  // Optional only because the base fake's signature takes none; every caller passes one.
  override async loadKnowledge(userId?: string) {
    return [...(this.docsByUser.get(userId ?? '')?.values() ?? [])].map((d) => structuredClone(d));
  }
  override async putStaged(userId: string, docs: readonly StagedDocument[], batchId: string) {
    for (const d of docs) {
      this.log.add('knowledge.putStaged', userId, `${stagingPrefix(userId)}${d.path}`);
      this.log.addItem('knowledge.putStaged', userId, ddbKey(userId, keys.stagedSk(d.path)), {
        text: d.text,
        meta: d.meta,
        body: d.body,
        title: d.title,
        path: d.path,
        sourceTurns: d.sourceTurns,
      });
    }
    return super.putStaged(userId, docs, batchId);
  }
  override async reinforce(userId: string, path: string, batchId: string) {
    this.log.add('knowledge.reinforce', userId, `${stagingPrefix(userId)}${path}`);
    return super.reinforce(userId, path, batchId);
  }
  override async putKnowledge(userId: string, entries: ReadonlyArray<KnowledgeEntry>) {
    const docs = this.docsByUser.get(userId) ?? new Map<string, KnowledgeDoc>();
    for (const { path, doc } of entries) {
      this.log.add('knowledge.putKnowledge', userId, `${knowledgePrefix(userId)}${path}`);
      docs.set(doc.id, structuredClone(doc));
    }
    if (entries.length > 0) this.log.add('knowledge.putKnowledge', userId, ddbKey(userId, keys.knowledgeIndexSk));
    this.docsByUser.set(userId, docs);
    return super.putKnowledge(userId, entries);
  }
  override async writeKnowledgeFiles(userId: string, entries: ReadonlyArray<KnowledgeEntry>) {
    for (const { path } of entries)
      this.log.add('knowledge.writeKnowledgeFiles', userId, `${knowledgePrefix(userId)}${path}`);
    return super.writeKnowledgeFiles(userId, entries);
  }
  override async updateKnowledgeIndex<R>(
    userId: string,
    change: (docs: readonly KnowledgeDoc[]) => KnowledgeIndexChange<R>,
  ): Promise<R> {
    const current = [...(this.docsByUser.get(userId)?.values() ?? [])].map((d) => structuredClone(d));
    const next = change(current);
    if (next.docs !== undefined) {
      for (const path of next.remove ?? [])
        this.log.add('knowledge.updateKnowledgeIndex', userId, `${knowledgePrefix(userId)}${path}`);
      this.log.add('knowledge.updateKnowledgeIndex', userId, ddbKey(userId, keys.knowledgeIndexSk));
      this.docsByUser.set(userId, new Map(next.docs.map((d) => [d.id, structuredClone(d)])));
    }
    // The base fake keeps one index for everybody: it is given this user's result.
    return super.updateKnowledgeIndex(userId, () => next);
  }
  override async deleteStaged(userId: string, path: string) {
    this.log.add('knowledge.deleteStaged', userId, `${stagingPrefix(userId)}${path}`);
    return super.deleteStaged(userId, path);
  }
  override async promote(
    userId: string,
    record: StagedRecord,
    knowledgePath: string,
    markdown: string,
    doc: KnowledgeDoc,
  ) {
    this.log.add('knowledge.promote', userId, `${stagingPrefix(userId)}${record.path}`);
    return super.promote(userId, record, knowledgePath, markdown, doc);
  }
  override async settlePromoted(userId: string, record: StagedRecord, knowledgePath: string) {
    this.log.add('knowledge.settlePromoted', userId, `${stagingPrefix(userId)}${record.path}`);
    this.log.add('knowledge.settlePromoted', userId, ddbKey(userId, keys.stagedSk(record.path)));
    return super.settlePromoted(userId, record, knowledgePath);
  }
  override async rewriteKnowledgeFile(userId: string, path: string, render: (current: string | null) => string) {
    this.log.add('knowledge.rewriteKnowledgeFile', userId, `${knowledgePrefix(userId)}${path}`);
    return super.rewriteKnowledgeFile(userId, path, render);
  }
  override async recordReview(userId: string, path: string, review: NonNullable<StagedRecord['review']>) {
    this.log.add('knowledge.recordReview', userId, `${stagingPrefix(userId)}${path}`);
    this.log.add('knowledge.recordReview', userId, ddbKey(userId, keys.stagedSk(path)));
    return super.recordReview(userId, path, review);
  }
  override async putModelOutput(userId: string, batchId: string, r: ModelResponse) {
    this.log.add('knowledge.putModelOutput', userId, modelOutputKey(userId, batchId));
    return super.putModelOutput(userId, batchId, r);
  }
  override async putEpisode(userId: string, turnId: number, markdown: string) {
    this.log.add('knowledge.putEpisode', userId, episodeKey(userId, turnId));
    return super.putEpisode(userId, turnId, markdown);
  }
  override async putEventEpisode(userId: string, episodeId: string, markdown: string) {
    this.log.add('knowledge.putEventEpisode', userId, eventEpisodeKey(userId, episodeId));
    return super.putEventEpisode(userId, episodeId, markdown);
  }
}

export class RecordingExpiryLog extends MemoryExpiryLog {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async write(userId: string, sweptAt: string, deletions: Parameters<MemoryExpiryLog['write']>[2]) {
    this.log.add('expiryLog', userId, ddbKey(userId, keys.expiryLogSk(sweptAt.slice(0, 10))));
    return super.write(userId, sweptAt, deletions);
  }
}
