import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type TurnSaved, TurnSavedSchema } from '../../events/turn-saved.js';
import { type EventEpisode, eventEpisodeText, summariseEpisode } from './episodes.js';
import { keys, turnDocKey } from '../kernel/memory-paths.js';
import { parseTurnDocument, turnContentHash, turnDocumentPlacement, turnSearchText } from './turn-document.js';
import type { TurnIndexEntry } from '../items/source-items.js';
import { toEventEpisode, toIndexEntry } from './turn-index-row.js';
import type { TurnStore } from './turn.port.js';
import { batchGetAll, batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import { getText, isMissingObject } from '../kernel/s3-objects.adapter.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/**
 * The turn index in DynamoDB, each turn's document inline in its item when it is small
 * (`doc`, up to INLINE_TURN_MAX_BYTES: one durable write per turn), else in S3
 * (`users/{u}/turns/{n}/{hash}.md`, content-addressed so a conflicting republish never
 * overwrites what was counted, tagged for the archival rule) with its key in the item.
 */
export class DynamoS3TurnStore implements TurnStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  /** Marks the turns and episodes written as changed for the search index (in the same BatchWriteItem). */
  private readonly changes: SearchChangeLog;

  constructor(storage: Storage) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
  }

  /**
   * Large documents first (in parallel), then the index entries in BatchWriteItem requests of
   * up to 25 — one write request for a whole SQS batch of turns — with the change marks of
   * `marked` (all of these turns when absent). Plain puts are safe here: an entry is only ever
   * rewritten with the same turn (the caller drops duplicates).
   */
  async saveTurns(
    turns: readonly TurnSaved[],
    marked: ReadonlyArray<{ userId: string; turnId: number }> = turns,
  ): Promise<void> {
    const items = await Promise.all(turns.map((turn) => this.indexItem(turn)));
    const marks = this.changes.requestsFor(marked.map((t) => ({ userId: t.userId, itemId: `turn:${t.turnId}` })));
    await batchWriteAll(this.ddb, this.tableName, [...items.map((Item) => ({ PutRequest: { Item } })), ...marks]);
  }

  /** TURNLOG put only if absent (a condition that fails consumes a write unit, and happens once per state reset at most). */
  async openTurnLog(userId: string, from: number): Promise<void> {
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: keys.userPk(userId), sk: keys.turnLogSk, kind: 'turn-log', userId, from },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }

  /** A turn's index item; a document too large to go inline is put in S3 first. */
  private async indexItem(turn: TurnSaved): Promise<Record<string, unknown>> {
    const hash = turnContentHash(turn);
    const { body, inline } = turnDocumentPlacement(turn);
    const docKey = turnDocKey(turn.userId, turn.turnId, hash);
    if (!inline) {
      await this.s3.send(
        // The tag lets the bucket's lifecycle rule move originals to a colder class after 30 days (req R-ARC-1).
        new PutObjectCommand({
          Bucket: this.bucketName,
          Key: docKey,
          Body: body,
          ContentType: 'text/markdown; charset=utf-8',
          Tagging: 'kind=turn',
        }),
      );
    }
    return {
      pk: keys.userPk(turn.userId),
      sk: keys.turnSk(turn.turnId),
      kind: 'turn',
      userId: turn.userId,
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      timestamp: turn.timestamp,
      ...(inline ? { doc: body } : { docKey }),
      contentHash: hash,
      validation: turn.signals?.validation,
      quality: turn.signals?.quality,
      // What search reads of the turn without an S3 object: its words (capped) and its
      // attributes. An inline document holds the words already, and search derives them from
      // it (a copy would make a turn's item cost more write units);
      // only a turn whose document is in S3 keeps them here.
      ...(inline ? {} : { text: turnSearchText(turn) }),
      attributes: turn.attributes,
      ...(turn.episode ? { episode: summariseEpisode(turn.episode) } : {}),
    };
  }

  async turnsSince(userId: string, fromIso: string, limit: number): Promise<number[]> {
    const ids: number[] = [];
    let start: Record<string, unknown> | undefined;
    // Newest first; stop at the first turn older than the window (turn ids rise with time).
    // Pages of 16, 32, 64, then 100 items: a Query is billed on every item it reads, projection
    // or not (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html),
    // and a day's turns are often far fewer than 100, so a first page of 100 read mostly
    // turns older than the window.
    let page = 16;
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
          ProjectionExpression: 'turnId, #ts',
          ExpressionAttributeNames: { '#ts': 'timestamp' },
          ScanIndexForward: false,
          Limit: page,
          ExclusiveStartKey: start,
        }),
      );
      page = Math.min(page * 2, 100);
      for (const item of res.Items ?? []) {
        if (String(item.timestamp) < fromIso || ids.length >= limit) return ids;
        ids.push(Number(item.turnId));
      }
      start = res.LastEvaluatedKey;
    } while (start);
    return ids;
  }

  async indexedTurnIds(userId: string, turnIds: readonly number[]): Promise<Set<number>> {
    const items = await this.batchGet(userId, turnIds, ['turnId']);
    return new Set(items.map((i) => Number(i.turnId)));
  }

  async turnIndex(userId: string, turnIds: readonly number[]): Promise<TurnIndexEntry[]> {
    const items = await this.batchGet(userId, turnIds, [
      'userId',
      'turnId',
      'sessionId',
      '#ts',
      '#text',
      'doc',
      'summary',
      'validation',
      'quality',
      'attributes',
      'episode',
    ]);
    return items.map((i) => toIndexEntry(i)).sort((a, b) => a.turnId - b.turnId);
  }

  /** Every index entry of the user, oldest first. */
  async allTurnIndex(userId: string): Promise<TurnIndexEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
      ProjectionExpression:
        'userId, turnId, sessionId, #ts, #text, doc, summary, validation, quality, attributes, episode',
      ExpressionAttributeNames: { '#ts': 'timestamp', '#text': 'text' },
    });
    return items.map((i) => toIndexEntry(i));
  }

  /** The index entries of the user's turns that carried an episode, oldest first (text left out). */
  async episodes(userId: string): Promise<TurnIndexEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      FilterExpression: 'attribute_exists(episode)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
      ProjectionExpression: 'userId, turnId, sessionId, #ts, episode',
      ExpressionAttributeNames: { '#ts': 'timestamp' },
    });
    return items.map((i) => toIndexEntry(i));
  }

  /** agent.event episodes: one item each beside the turn index; the episode as JSON (any params stay as sent). */
  async saveEventEpisodes(episodes: readonly EventEpisode[]): Promise<void> {
    const marks = this.changes.requestsFor(
      episodes.map((e) => ({ userId: e.userId, itemId: `episode:${e.episodeId}` })),
    );
    await batchWriteAll(this.ddb, this.tableName, [
      ...episodes.map((e) => ({
        PutRequest: {
          Item: {
            pk: keys.userPk(e.userId),
            sk: keys.eventEpisodeSk(e.episodeId),
            kind: 'event-episode',
            userId: e.userId,
            episodeId: e.episodeId,
            timestamp: e.timestamp,
            trigger: e.trigger,
            ...(e.sessionId !== undefined ? { sessionId: e.sessionId } : {}),
            ...(e.turnId !== undefined ? { turnId: e.turnId } : {}),
            ...(e.detail !== undefined ? { detail: e.detail } : {}),
            text: eventEpisodeText(e),
            episode: JSON.stringify(e.episode),
          },
        },
      })),
      ...marks,
    ]);
  }

  async eventEpisodes(userId: string, episodeIds?: readonly string[]): Promise<EventEpisode[]> {
    let items: Array<Record<string, unknown>>;
    if (episodeIds === undefined) {
      items = await queryAll(this.ddb, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)',
        ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':e': keys.eventEpisodePrefix },
      });
    } else {
      const itemKeys = [...new Set(episodeIds)].map((id) => ({ pk: keys.userPk(userId), sk: keys.eventEpisodeSk(id) }));
      items = await batchGetAll(this.ddb, this.tableName, itemKeys, { consistent: true });
    }
    return items
      .map(toEventEpisode)
      .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.episodeId.localeCompare(b.episodeId));
  }

  async getTurns(userId: string, turnIds: readonly number[]) {
    const items = new Map(
      (await this.batchGet(userId, turnIds, ['turnId', 'docKey', 'doc'])).map((i) => [Number(i.turnId), i]),
    );
    const turns: TurnSaved[] = [];
    const missing: Array<{ turnId: number; reason: string }> = [];
    await Promise.all(
      [...new Set(turnIds)].map(async (turnId) => {
        const item = items.get(turnId);
        if (!item) return void missing.push({ turnId, reason: 'not in the turn index' });
        const where = typeof item.doc === 'string' ? 'its inline document' : `document ${String(item.docKey)}`;
        try {
          const text =
            typeof item.doc === 'string' ? item.doc : await getText(this.s3, this.bucketName, String(item.docKey));
          const parsed = TurnSavedSchema.safeParse(parseTurnDocument(text));
          if (parsed.success && parsed.data.userId === userId) turns.push(parsed.data);
          else missing.push({ turnId, reason: `${where} is not a valid turn of this user` });
        } catch (error) {
          // Req R-ASM-2 ("file read failure: log per file, continue") is for a document that
          // is gone; throttling, 5xx and timeouts fail the job instead, so its retry reads it.
          if (!isMissingObject(error)) throw error;
          missing.push({ turnId, reason: `${where} unreadable: ${(error as Error).name}` });
        }
      }),
    );
    turns.sort((a, b) => a.turnId - b.turnId);
    return { turns, missing: missing.sort((a, b) => a.turnId - b.turnId) };
  }

  /**
   * Turn index items by id, read for as few units as DynamoDB bills (each turn was
   * read about six times, by its batch, summary, nightly run and the search index's folds):
   *
   * - A run of consecutive ids is one Query over its sort keys (`TURN#` and a padded id, so the
   *   range holds those turns and nothing else): a Query is billed on the items' total size
   *   rounded up to 4 KB once, a BatchGetItem rounds each item up to 4 KB — ten 1 KB turns
   *   are 3 units, not 10
   *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
   *   Lone ids go in one BatchGetItem (a Query of one item costs the same, in more requests).
   * - Eventually consistent first (half the units), then strongly consistent for the ids it
   *   did not find. A turn's item is put once and never changed (saveTurns rewrites it only
   *   with the same turn; nothing updates it), and DynamoDB's reads are read-committed: an
   *   eventually consistent read returns the item as committed or, shortly after its write,
   *   nothing (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
   *   A job is enqueued only after its turns' items were written, so a turn a stale replica
   *   lacks is read again strongly consistent: the callers get what a consistent read returns.
   *   The one other write, a forget's delete, runs on the user's FIFO group before any job
   *   asked after it and deletes twice FORGET_SETTLE_SECONDS apart; jobs asked before it are
   *   dropped (forget-user.ts), so no job reads a turn the forget deleted.
   */
  private async batchGet(
    userId: string,
    turnIds: readonly number[],
    attributes: string[],
  ): Promise<Array<Record<string, unknown>>> {
    const ids = [...new Set(turnIds)].sort((a, b) => a - b);
    const projection = attributes.includes('turnId') ? attributes : [...attributes, 'turnId'];
    const runs = consecutiveRuns(ids);
    const lone = runs.filter((r) => r.length === 1).flat();
    const [ranged, single] = await Promise.all([
      Promise.all(
        runs
          .filter((r) => r.length > 1)
          .map((r) => this.queryRange(userId, r[0] as number, r[r.length - 1] as number, projection)),
      ),
      this.batchGetTurns(userId, lone, projection, false),
    ]);
    const found = [...ranged.flat(), ...single];
    const got = new Set(found.map((i) => Number(i.turnId)));
    const lacking = ids.filter((id) => !got.has(id));
    return lacking.length === 0 ? found : [...found, ...(await this.batchGetTurns(userId, lacking, projection, true))];
  }

  /** The turn index items from `first` to `last` (eventually consistent). */
  private queryRange(
    userId: string,
    first: number,
    last: number,
    attributes: string[],
  ): Promise<Array<Record<string, unknown>>> {
    return queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
      ExpressionAttributeValues: {
        ':pk': keys.userPk(userId),
        ':first': keys.turnSk(first),
        ':last': keys.turnSk(last),
      },
      ProjectionExpression: attributes.join(', '),
      ...(namesOf(attributes) ? { ExpressionAttributeNames: namesOf(attributes) } : {}),
    });
  }

  private batchGetTurns(
    userId: string,
    turnIds: readonly number[],
    attributes: string[],
    consistent: boolean,
  ): Promise<Array<Record<string, unknown>>> {
    if (turnIds.length === 0) return Promise.resolve([]);
    const itemKeys = turnIds.map((id) => ({ pk: keys.userPk(userId), sk: keys.turnSk(id) }));
    const names = namesOf(attributes);
    return batchGetAll(this.ddb, this.tableName, itemKeys, {
      projection: attributes.join(', '),
      consistent,
      ...(names ? { names } : {}),
    });
  }
}

/** The placeholders a projection names (`#ts`, `#text`). */
function namesOf(attributes: readonly string[]): Record<string, string> | undefined {
  const used = Object.entries({ '#ts': 'timestamp', '#text': 'text' }).filter(([k]) => attributes.includes(k));
  return used.length > 0 ? Object.fromEntries(used) : undefined;
}

/** Sorted ids as runs of consecutive ids: [1, 2, 3, 7, 9, 10] → [[1, 2, 3], [7], [9, 10]]. */
function consecutiveRuns(ids: readonly number[]): number[][] {
  const runs: number[][] = [];
  for (const id of ids) {
    const run = runs[runs.length - 1];
    if (run && run[run.length - 1] === id - 1) run.push(id);
    else runs.push([id]);
  }
  return runs;
}
