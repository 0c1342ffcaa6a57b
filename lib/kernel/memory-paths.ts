import { GLOBAL_USER } from '../items/memory-item.js';
import { fnv1a32 } from './stable-hash.js';

/**
 * Where a user's memory lives: every S3 key and every DynamoDB key and key prefix, in this one
 * module (adapters, the local harness, benches and test helpers build keys from it; tests that
 * check the stored layout may spell it out). Every key starts with the user's own prefix;
 * per-user isolation in S3 and DynamoDB is this prefix plus a check on every read path.
 */
export const pad = (n: number): string => String(n).padStart(10, '0');

/**
 * The last turn a batch's or summary's id names: `batch-{first}-{last}`, `summary-{first}-{last}`,
 * `manual-{first}-{last}-{hash}` (their turns, ascending); 0 for an id that names none.
 */
export const lastTurnOfId = (id: string): number => Number(/^[a-z]+-\d+-(\d+)(?:-|$)/.exec(id)?.[1] ?? 0);

/** S3: every user's folder is under it. */
export const usersRoot = 'users/';
export const userPrefix = (userId: string): string => `${usersRoot}${userId}/`;
/** Folders of a user's prefix that readers name relative to it (an archive's paths): turn documents, search segments. */
export const turnsFolder = 'turns/';
export const searchSegmentsFolder = 'index/search/';
export const turnDocKey = (userId: string, turnId: number, contentHash: string): string =>
  `${userPrefix(userId)}${turnsFolder}${pad(turnId)}/${contentHash}.md`;
export const stagingPrefix = (userId: string): string => `${userPrefix(userId)}Knowledge_staging/`;
export const knowledgePrefix = (userId: string): string => `${userPrefix(userId)}Knowledge/`;
/** One version of the user's knowledge index snapshot: its number and a hash of its content make it unique. */
export const knowledgeIndexKey = (userId: string, version: number, contentHash: string): string =>
  `${userPrefix(userId)}index/knowledge/${pad(version)}-${contentHash}.json`;
/**
 * One segment of the user's search index: immutable, named by the index version
 * that added it and by its writer (two compactions of one version must not share a key: the
 * loser deletes its own).
 */
export const searchSegmentKey = (userId: string, version: number, writer: string): string =>
  `${searchSegmentsPrefix(userId)}${pad(version)}-${writer}.seg`;
/** Every segment object of an owner's search index (and its parts). */
export const searchSegmentsPrefix = (userId: string): string => `${userPrefix(userId)}${searchSegmentsFolder}`;
/** An episode's document (req R-EPI), written by the reflection that reviewed its turn. */
export const episodeKey = (userId: string, turnId: number): string => `${userPrefix(userId)}episodes/${pad(turnId)}.md`;
/** An agent.event's episode (its id starts `ev-`, so it never meets a turn's). */
export const eventEpisodeKey = (userId: string, episodeId: string): string =>
  `${userPrefix(userId)}episodes/${episodeId}.md`;
/** A summary pair's document (lib/summaries/summary.ts): the prompt it answered and the summary, one object. */
export const summaryDocKey = (userId: string, id: string): string => `${userPrefix(userId)}summaries/${id}.md`;
/** Every batch's log, its model output (when too large for an item) and, under failed/, the logs of failed jobs. */
export const batchLogPrefix = (userId: string): string => `${userPrefix(userId)}Logs/reflector/`;
export const batchLogKey = (userId: string, batchId: string): string => `${batchLogPrefix(userId)}${batchId}.json`;
export const batchFailurePrefix = (userId: string): string => `${batchLogPrefix(userId)}failed/`;
export const batchFailureKey = (userId: string, batchId: string): string =>
  `${batchFailurePrefix(userId)}${batchId}.json`;
export const modelOutputKey = (userId: string, batchId: string): string =>
  `${batchLogPrefix(userId)}${batchId}.model-output.json`;
/** S3: large events parked by the publisher (claim checks), every user's under it. */
export const claimsRoot = 'claims/';
export const claimsPrefix = (userId: string): string => `${claimsRoot}${userId}/`;
export const claimKey = (userId: string, turnId: number, hash: string): string =>
  `${claimsPrefix(userId)}${pad(turnId)}-${hash}.json`;
/** S3: routine reflections kept for the nightly batch inference job (lib/batch-inference/routine-batch.ts), every user's under it. */
export const deferredRoot = 'batch-inference/deferred/';
export const deferredPrefix = (userId: string): string => `${deferredRoot}${userId}/`;
/** S3: rejected records, by day (`rejectedPrefix(day)`; without a day, all of them). */
export const rejectedRoot = 'rejected/';
export const rejectedPrefix = (day?: string): string => (day ? `${rejectedRoot}${day}/` : rejectedRoot);
export const rejectedEventKey = (day: string, source: string, messageId: string): string =>
  `${rejectedRoot}${day}/${source}/${messageId}.json`;

/**
 * Normalise a path the model cites relative to Knowledge/ (e.g. `Facts/a.md`).
 * Returns null for anything that could leave the user's folder: absolute paths,
 * `..` or `.` segments, backslashes, empty segments, control characters.
 */
export function safeKnowledgePath(path: string): string | null {
  return safeRelativePath(path.trim().replace(/^Knowledge\//, ''));
}

/** A path that stays inside the folder it is relative to, or null (absolute, `..`, `.`, empty segments, backslashes, control characters). */
export function safeRelativePath(path: string): string | null {
  if (path === '' || path.startsWith('/') || path.includes('\\')) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u001f]/.test(path)) return null;
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return segments.join('/');
}

/** A Knowledge document's path as a person or the model writes it (`Knowledge/Facts/x.md`, `/Facts/x.md`) → its id, relative to Knowledge/. */
export const knowledgeRelative = (path: string): string => path.replace(/^\/*(Knowledge\/)?/, '');

/**
 * Write shards of each by-day index partition (`ACTIVITY#`, `STAGEDDAY#`, `RUNS#`, `COSTDAY#`, `TIEREXP#` in GSI
 * gsi1). DynamoDB serves at most 1,000 write units a second per partition key value
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html),
 * and a GSI short of capacity throttles the table writes behind it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes);
 * a day's key takes every user's writes of that day — at 00:00 UTC each active user's first
 * turn writes its activity marker, at 03:00 every nightly run its log record. AWS's answer is
 * a calculated suffix (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-sharding.html):
 * a stable hash of the user id mod DAY_SHARDS, so one user's items of a day sit in one shard
 * and a reader of the day queries every shard. Eight shards take 8,000 write units a second
 * per day; a reader pays eight small queries per day read.
 */
export const DAY_SHARDS = 8;

/** The shard of a user's by-day index entries: stable across versions and machines. */
export const dayShard = (userId: string): number => fnv1a32(userId) % DAY_SHARDS;

/** The by-day indexes of gsi1, by the prefix of their partition keys. */
export type DayIndex = 'ACTIVITY' | 'STAGEDDAY' | 'RUNS' | 'COSTDAY' | 'TIEREXP';

/** The partition of gsi1 a user's entry of that day is written to. */
const dayGsiPk = (index: DayIndex, day: string, userId: string): string => `${index}#${day}#${dayShard(userId)}`;

/** Every gsi1 partition a reader of one day queries: each shard. */
export const dayGsiPartitions = (index: DayIndex, day: string): string[] =>
  Array.from({ length: DAY_SHARDS }, (_, shard) => `${index}#${day}#${shard}`);

const graphLogSubject = (e: {
  fact?: string | undefined;
  edge?: string | undefined;
  entity?: string | undefined;
  into?: string | undefined;
}) =>
  e.fact !== undefined
    ? `fact:${e.fact}`
    : e.edge !== undefined
      ? `edge:${e.edge}`
      : e.entity !== undefined
        ? `entity:${e.entity}${e.into !== undefined ? `>${e.into}` : ''}`
        : '';

/** DynamoDB single-table keys: partition keys (`…Pk`), sort keys (`…Sk`) and the prefixes queries begin with (`…Prefix`). */
export const keys = {
  userPk: (userId: string) => `USER#${userId}`,
  /** Every user's partition key begins with it (a scan over all users). */
  userPkPrefix: 'USER#',
  /** The partition of an owner's memory items and search index: a user's, or `GLOBAL` for items shared with every user. */
  ownerPk: (userId: string) => (userId === GLOBAL_USER ? 'GLOBAL' : `USER#${userId}`),
  signalSk: 'SIGNAL',
  turnSk: (turnId: number) => `TURN#${pad(turnId)}`,
  turnPrefix: 'TURN#',
  /** The first sort key after every turn's (`$` follows `#`). */
  turnsEnd: 'TURN$',
  /** The lowest turn id the signal function may have written without a search change mark. */
  turnLogSk: 'TURNLOG',
  /** An agent.event's episode (req R-EPI), beside the turn index. */
  eventEpisodeSk: (episodeId: string) => `EPISODE#${episodeId}`,
  eventEpisodePrefix: 'EPISODE#',
  /**
   * A batch's log, under the last turn its id names (`batch-{first}-{last}`), so a user's logs
   * sort by turn — and, turn ids rising with time, by time: a sleep-time run reads its window
   * as a key range (`DynamoS3SummarySource`), not the user's whole history. Logs written before
   * 2026-11-27 are under `BATCH#{id}` (docs/data-model.md, "Window reads by key range").
   */
  batchSk: (batchId: string) => `BATCH#${pad(lastTurnOfId(batchId))}#${batchId}`,
  batchPrefix: 'BATCH#',
  /** A day's expiry sweep log of the user (req R-PRO-3; older logs are S3 objects under Logs/expiry/). */
  expiryLogSk: (day: string) => `EXPIRYLOG#${day}`,
  /** The model's answer a job recorded before using it (a redelivery reuses it): one item, not an S3 object. */
  modelOutputSk: (jobId: string) => `MODELOUT#${jobId}`,
  stagedSk: (path: string) => `STAGED#${path}`,
  stagedPrefix: 'STAGED#',
  /** A summary's record, under the last turn its id names (`summary-{first}-{last}`, `manual-{first}-{last}-{hash}`), as a batch's log. */
  summarySk: (id: string) => `SUMMARY#${pad(lastTurnOfId(id))}#${id}`,
  summaryPrefix: 'SUMMARY#',
  /**
   * The turn-keyed items of a kind (`BATCH#`, `SUMMARY#`) whose last turn is `from` or later:
   * the bounds of a key range. `:` follows the digits, so the range holds no key of the form
   * written before 2026-11-27 (`BATCH#batch-…`).
   */
  turnKeyed: (prefix: 'BATCH#' | 'SUMMARY#', from = 0) => ({ low: `${prefix}${pad(from)}#`, high: `${prefix}:` }),
  /** Sleep-time run log: runs sorted by start time… */
  runSk: (kind: string, startedAt: string, runId: string) => `RUN#${kind}#${startedAt}#${runId}`,
  /** …every run of every kind, and those of one kind. */
  runsPrefix: 'RUN#',
  runKindPrefix: (kind: string) => `RUN#${kind}#`,
  /** Staged-by-day index (GSI gsi1, write-sharded) for the expiry sweep. */
  stagedDayGsiPk: (day: string, userId: string) => dayGsiPk('STAGEDDAY', day, userId),
  stagedDayGsiSk: (userId: string, path: string) => `${userId}#${path}`,
  settingsSk: 'SETTINGS',
  /** A deleted fact's tombstone (lib/forget/tombstone.ts): one item per key, no content. */
  tombstoneSk: (key: string) => `TOMBSTONE#${key}`,
  /** The turns forgotten by provenance (a number set): queued jobs citing them write nothing. */
  forgottenTurnsSk: 'FORGOTTENTURNS',
  /**
   * A diary entry's record (lib/diary/diary.ts), under the batch's last turn (its id ends
   * with it: `batch-{first}-{last}`), so the user's entries sort in conversation order.
   */
  diarySk: (batchId: string) => `DIARY#${pad(Number(/-(\d+)$/.exec(batchId)?.[1] ?? 0))}#${batchId}`,
  diaryPrefix: 'DIARY#',
  /** A memory item written through the API (tier entries, saved memories), in its owner's partition… */
  memorySk: (id: string) => `MEM#${id}`,
  memoryPrefix: 'MEM#',
  /** A derived item's trust adjustment (req R-SCOPE-2, lib/trust/scope-trust.ts ItemTrust), in its owner's partition, by item id. */
  trustSk: (itemId: string) => `TRUST#${itemId}`,
  trustPrefix: 'TRUST#',
  /** The audit trail (lib/items/memory-item-store.adapter.ts): an entry per change, in the owner's partition, by time. */
  auditSk: (entry: { at: string; itemId: string; action: string }) =>
    `AUDIT#${entry.at}#${entry.itemId}#${entry.action}`,
  auditPrefix: 'AUDIT#',
  /** …in GSI gsi1's (write-sharded) partition of the day it expires, while it lives, for the expiry sweep… */
  tierExpiryGsiPk: (day: string, userId: string) => dayGsiPk('TIEREXP', day, userId),
  tierExpiryGsiSk: (expiresAt: string, userId: string, id: string) => `${expiresAt}#${userId}#${id}`,
  /** …and, for an ephemeral entry of a session, named in that session's list (cleared when it closes). */
  sessionEphemeraSk: (sessionId: string) => `EPHEMERA#${sessionId}`,
  /** The pointer to the current version of the user's knowledge index snapshot (lib/knowledge/knowledge-index.adapter.ts). */
  knowledgeIndexSk: 'KNOWLEDGEINDEX',
  /** The pointer to the current segments of the user's search index (lib/search/search-index-store.adapter.ts). */
  searchIndexSk: 'SEARCHINDEX',
  /**
   * Searchable items that changed after the search index's segments were written: one mark per
   * write, under its unique `at` (marks written before 2026-11-27 carry one item's id instead).
   */
  searchChangeSk: (at: string) => `SEARCHCHANGE#${at}`,
  searchChangePrefix: 'SEARCHCHANGE#',
  /** Activity index: one marker item per user per active day, in the user's partition… */
  activitySk: (day: string) => `ACTIVITY#${day}`,
  /** …and in GSI gsi1's (write-sharded) partition of that day, for the nightly and weekly selection. */
  activityGsiPk: (day: string, userId: string) => dayGsiPk('ACTIVITY', day, userId),
  activityGsiSk: (userId: string) => `USER#${userId}`,
  /** Sleep-time run log by day (GSI gsi1, write-sharded): every user's sleep-time runs of a day. */
  runsDayGsiPk: (day: string, userId: string) => dayGsiPk('RUNS', day, userId),
  runsDayGsiSk: (startedAt: string, userId: string) => `${startedAt}#${userId}`,
  /** The cost ledger (lib/costs/daily-cost.ts): one entry per job that asked the model, in the user's partition by day… */
  costSk: (day: string, jobId: string) => `COST#${day}#${jobId}`,
  costPrefix: 'COST#',
  /** …and in GSI gsi1's (write-sharded) partition of that day, for the stage's daily total. */
  costDayGsiPk: (day: string, userId: string) => dayGsiPk('COSTDAY', day, userId),
  costDayGsiSk: (userId: string, jobId: string) => `${userId}#${jobId}`,
  /** Source reliability (req R-SRC): a domain's counts for all users, in shards (a user's observations go to one)… */
  sourcePk: (domain: string, shard: number) => `SOURCE#${domain}#${shard}`,
  sourceStatsSk: 'STATS',
  /** …and, in the reporting user's partition, a marker per counted observation (turn and position). */
  sourceObservationSk: (key: string) => `SOURCEOBS#${key}`,
  /** The relation graph (lib/graph/relation-graph.ts): adjacency items in the user's partition. */
  edgeSk: (id: string) => `EDGE#${id}`,
  edgePrefix: 'EDGE#',
  /** Every edge from an entity: its ids begin with the entity's key and `|` (keys hold no `|`). */
  edgesFromPrefix: (key: string) => `EDGE#${key}|`,
  /** The reverse adjacency: an item per edge under its target, naming the edge. */
  edgeToSk: (edge: { from: string; relation: string; to: string }) => `EDGETO#${edge.to}|${edge.relation}|${edge.from}`,
  edgesToPrefix: (key: string) => `EDGETO#${key}|`,
  entitySk: (key: string) => `ENTITY#${key}`,
  entityPrefix: 'ENTITY#',
  /** An entity merged into another, under the other (checked against the entity's `mergedInto` when read: a split leaves it stale). */
  aliasSk: (into: string, alias: string) => `ALIAS#${into}|${alias}`,
  aliasesPrefix: (into: string) => `ALIAS#${into}|`,
  /**
   * Forgetting a user: the receipts of their erasures, outside their partition so
   * the erasure cannot delete them — the audit log that a forget happened, with counts and
   * no content, and the mark that drops what was asked for before it.
   */
  forgetPk: (userId: string) => `FORGET#${userId}`,
  forgetSk: (requestedAt: string) => `RECEIPT#${requestedAt}`,
  forgetPrefix: 'RECEIPT#',
  /** Marks a user's graph as carrying the adjacency indexes (graphs written before them get them once). */
  graphIndexSk: 'GRAPHINDEX',
  /**
   * A hygiene log entry, keyed by what it is (its time, action and subject), not by its place
   * in a write: a redelivered sweep writes the same keys again, so an entry is never lost or
   * doubled (entries written before 2026-11-24 carry `#{n}#` there instead; both sort by time).
   */
  graphLogSk: (entry: {
    at: string;
    action: string;
    fact?: string | undefined;
    edge?: string | undefined;
    entity?: string | undefined;
    into?: string | undefined;
  }): string => `${keys.graphLogAtPrefix(entry.at)}${entry.action}#${graphLogSubject(entry)}`,
  /** The hygiene log entries one write made at one time, packed (lib/graph/dynamo-graph-store.adapter.ts). */
  graphLogPackSk: (at: string, digest: string, n: number): string => `${keys.graphLogAtPrefix(at)}*${digest}#${n}`,
  graphLogPrefix: 'GRAPHLOG#',
  /** Every hygiene log entry written at one time (a sweep's). */
  graphLogAtPrefix: (at: string) => `GRAPHLOG#${at}#`,
} as const;

/**
 * The sort key an item has now: a batch log's or summary's written before 2026-11-27 under its
 * id alone (`BATCH#{id}`, `SUMMARY#{id}`) moves under its last turn (`keys.batchSk`,
 * `keys.summarySk`); any other key stays as it is. Used by the migration that moves them and
 * by an archive's import (docs/data-model.md, "Window reads by key range").
 */
export function currentSk(sk: string): string {
  const forms = [
    [keys.batchPrefix, keys.batchSk],
    [keys.summaryPrefix, keys.summarySk],
  ] as const;
  for (const [prefix, turnKeyed] of forms) {
    if (sk.startsWith(prefix) && !/^\d{10}#/.test(sk.slice(prefix.length))) return turnKeyed(sk.slice(prefix.length));
  }
  return sk;
}

/**
 * How long a search change mark with a TTL lives: DynamoDB deletes it after this
 * (within days more), folded or not, so every owner with such a mark is compacted well within
 * it (docs/search-index.md, "Liveness").
 */
export const SEARCH_MARK_TTL_MS = 30 * 86_400_000;
