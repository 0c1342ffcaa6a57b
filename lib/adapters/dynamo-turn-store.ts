import type { DynamoSearchChangeLog } from './search-index-store.js';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { BatchGetCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type TurnSaved, TurnSavedSchema } from '../../events/turn-saved.js';
import { type EventEpisode, eventEpisodeText, summariseEpisode, type EpisodeSummary } from '../domain/episodes.js';
import type { Episode } from '../../events/episode.js';
import { keys, turnDocKey } from '../domain/memory-paths.js';
import { parseTurnDocument, turnContentHash, turnDocumentPlacement, turnSearchText } from '../domain/turn-document.js';
import type { TurnIndexEntry } from '../domain/memory-item.js';
import type { TurnStore } from '../ports.js';
import { batchWriteAll, queryAll } from './dynamo-query.js';
import { getText, isMissingObject } from './s3-objects.js';

/**
 * The turn index in DynamoDB, each turn's document inline in its item when it is small
 * (`doc`, up to INLINE_TURN_MAX_BYTES: one durable write per turn, issue 19), else in S3
 * (`users/{u}/turns/{n}/{hash}.md`, content-addressed so a conflicting republish never
 * overwrites what was counted, tagged for the archival rule) with its key in the item.
 */
export class S3DynamoTurnStore implements TurnStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly s3: S3Client,
    private readonly tableName: string,
    private readonly bucketName: string,
    /** Marks the turns and episodes written as changed for the search index (in the same BatchWriteItem). */
    private readonly changes: DynamoSearchChangeLog,
  ) {}

  /**
   * Large documents first (in parallel), then the index entries in BatchWriteItem requests of
   * up to 25 — one write request for a whole SQS batch of turns. Plain puts are safe here:
   * an entry is only ever rewritten with the same turn (the caller drops duplicates).
   */
  async saveTurns(turns: readonly TurnSaved[]): Promise<void> {
    const items = await Promise.all(turns.map((turn) => this.indexItem(turn)));
    const marks = this.changes.requestsFor(turns.map((t) => ({ userId: t.userId, itemId: `turn:${t.turnId}` })));
    await batchWriteAll(this.ddb, this.tableName, [...items.map((Item) => ({ PutRequest: { Item } })), ...marks]);
  }

  /** A turn's index item; a document too large to go inline is put in S3 first. */
  private async indexItem(turn: TurnSaved): Promise<Record<string, unknown>> {
    const hash = turnContentHash(turn);
    const { body, inline } = turnDocumentPlacement(turn);
    const docKey = turnDocKey(turn.userId, turn.turnId, hash);
    if (!inline) {
      await this.s3.send(
        // The tag lets the bucket's lifecycle rule move originals to a colder class after 30 days (req R-ARC-1).
        new PutObjectCommand({ Bucket: this.bucketName, Key: docKey, Body: body, ContentType: 'text/markdown; charset=utf-8', Tagging: 'kind=turn' }),
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
      // it (issue 19: the copy made a LoCoMo turn's item 1.75 write units instead of 1.02);
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
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
          ProjectionExpression: 'turnId, #ts',
          ExpressionAttributeNames: { '#ts': 'timestamp' },
          ScanIndexForward: false,
          Limit: 100,
          ExclusiveStartKey: start,
        }),
      );
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
    const items = await this.batchGet(userId, turnIds, ['userId', 'turnId', 'sessionId', '#ts', '#text', 'doc', 'summary', 'validation', 'quality', 'attributes', 'episode']);
    return items.map((i) => toIndexEntry(i)).sort((a, b) => a.turnId - b.turnId);
  }

  /** Every index entry of the user, oldest first. */
  async allTurnIndex(userId: string): Promise<TurnIndexEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
      ProjectionExpression: 'userId, turnId, sessionId, #ts, #text, doc, summary, validation, quality, attributes, episode',
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
    const marks = this.changes.requestsFor(episodes.map((e) => ({ userId: e.userId, itemId: `episode:${e.episodeId}` })));
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
      items = await this.batchGetKeys([...new Set(episodeIds)].map((id) => ({ pk: keys.userPk(userId), sk: keys.eventEpisodeSk(id) })));
    }
    return items.map(toEventEpisode).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.episodeId.localeCompare(b.episodeId));
  }

  async getTurns(userId: string, turnIds: readonly number[]) {
    const items = new Map((await this.batchGet(userId, turnIds, ['turnId', 'docKey', 'doc'])).map((i) => [Number(i.turnId), i]));
    const turns: TurnSaved[] = [];
    const missing: Array<{ turnId: number; reason: string }> = [];
    await Promise.all(
      [...new Set(turnIds)].map(async (turnId) => {
        const item = items.get(turnId);
        if (!item) return void missing.push({ turnId, reason: 'not in the turn index' });
        const where = typeof item.doc === 'string' ? 'its inline document' : `document ${String(item.docKey)}`;
        try {
          const text = typeof item.doc === 'string' ? item.doc : await getText(this.s3, this.bucketName, String(item.docKey));
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

  /** Strongly consistent BatchGet of turn index items. */
  private batchGet(userId: string, turnIds: readonly number[], attributes: string[]): Promise<Array<Record<string, unknown>>> {
    return this.batchGetKeys(
      [...new Set(turnIds)].map((id) => ({ pk: keys.userPk(userId), sk: keys.turnSk(id) })),
      attributes,
    );
  }

  /** Strongly consistent BatchGet, 100 keys a request, unprocessed keys retried; all attributes unless named. */
  private async batchGetKeys(itemKeys: ReadonlyArray<Record<string, unknown>>, attributes?: string[]): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (let i = 0; i < itemKeys.length; i += 100) {
      let request: Record<string, unknown>[] | undefined = itemKeys.slice(i, i + 100);
      for (let attempt = 0; request && request.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
        const res = await this.ddb.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: {
                Keys: request,
                ConsistentRead: true,
                ...(attributes ? { ProjectionExpression: attributes.join(', ') } : {}),
                ...(attributes?.some((a) => a.startsWith('#')) ? { ExpressionAttributeNames: { '#ts': 'timestamp', '#text': 'text' } } : {}),
              },
            },
          }),
        );
        out.push(...(res.Responses?.[this.tableName] ?? []));
        request = res.UnprocessedKeys?.[this.tableName]?.Keys as Record<string, unknown>[] | undefined;
        if (attempt > 8 && request && request.length > 0) throw new Error('BatchGet kept returning unprocessed keys');
      }
    }
    return out;
  }
}

/**
 * A turn's words for search: kept in the item when its document is in S3, else from its
 * inline document; entries written before the index kept the words have their summary.
 */
function searchTextOf(i: Record<string, unknown>): string {
  if (typeof i.text === 'string') return i.text;
  if (typeof i.doc === 'string') {
    const turn = parseTurnDocument(i.doc);
    return turnSearchText({ query: String(turn.query ?? ''), response: String(turn.response ?? ''), ...(turn.episode ? { episode: turn.episode as Episode } : {}) });
  }
  return String(i.summary ?? '');
}

function toIndexEntry(i: Record<string, unknown>): TurnIndexEntry {
  return {
    userId: String(i.userId),
    turnId: Number(i.turnId),
    sessionId: String(i.sessionId ?? ''),
    timestamp: String(i.timestamp ?? ''),
    text: searchTextOf(i),
    validation: typeof i.validation === 'string' ? i.validation : undefined,
    quality: typeof i.quality === 'number' ? i.quality : undefined,
    attributes: (i.attributes as Record<string, string> | undefined) ?? undefined,
    ...(i.episode ? { episode: i.episode as EpisodeSummary } : {}),
  };
}

function toEventEpisode(i: Record<string, unknown>): EventEpisode {
  return {
    userId: String(i.userId),
    episodeId: String(i.episodeId),
    timestamp: String(i.timestamp ?? ''),
    trigger: i.trigger as EventEpisode['trigger'],
    ...(typeof i.sessionId === 'string' ? { sessionId: i.sessionId } : {}),
    ...(typeof i.turnId === 'number' ? { turnId: i.turnId } : {}),
    ...(typeof i.detail === 'string' ? { detail: i.detail } : {}),
    episode: JSON.parse(String(i.episode)) as Episode,
  };
}
