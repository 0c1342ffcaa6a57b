/**
 * The turn index as the search index's change log for turns: the signal function
 * writes a turn above the highest one its signal state has counted without a change mark, so
 * the search index reads those turns from the turn index itself (docs/search-index.md, "Turns
 * without marks"). Every read here is strongly consistent: it returns every write acknowledged
 * before it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
 * which the safety argument rests on.
 *
 * A Query is billed on the total size of the items it reads, rounded up to 4 KB once, and a
 * strongly consistent read costs twice an eventually consistent one
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
 * the turns above the watermark (≤ ~1.5 KB each) cost about one read unit per 2.7 turns.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { MemoryItem } from '../items/memory-item.js';
import { turnItem } from '../items/source-items.js';
import { keys } from '../kernel/memory-paths.js';
import { parseSignalState } from '../signals/signal-state.js';
import type { TurnLog } from './search-index.port.js';
import { queryAll } from '../kernel/dynamo-query.adapter.js';
import { DynamoSignalStateStore } from '../signals/dynamo-signal-state-store.adapter.js';
import { toIndexEntry } from '../turns/turn-index-row.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

export class DynamoTurnLog implements TurnLog {
  private readonly states: DynamoSignalStateStore;
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
    this.states = new DynamoSignalStateStore(storage);
  }

  /** The signal state's highest counted turn (its store's strongly consistent read); null: no state, or a corrupt one. */
  async counted(userId: string): Promise<number | null> {
    const { raw } = await this.states.load(userId);
    if (raw === undefined) return null;
    const { state, corrupt } = parseSignalState(raw);
    return corrupt ? null : state.lastTurnId;
  }

  async unmarkedFrom(userId: string): Promise<number | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.turnLogSk },
        ConsistentRead: true,
      }),
    );
    return typeof res.Item?.from === 'number' ? res.Item.from : null;
  }

  async turnsAfter(userId: string, after: number): Promise<MemoryItem[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      // `TURN$` is the first key after every `TURN#…` ('$' follows '#'); ids are padded, so they sort by number.
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':lo': keys.turnSk(after + 1), ':hi': keys.turnsEnd },
      ProjectionExpression:
        'userId, turnId, sessionId, #ts, #text, doc, summary, validation, quality, attributes, episode',
      ExpressionAttributeNames: { '#ts': 'timestamp', '#text': 'text' },
      ConsistentRead: true,
    });
    return items.map((i) => turnItem(toIndexEntry(i)));
  }
}
