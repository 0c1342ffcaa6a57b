import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import { emptyStats, type SourceObservation, type SourceStats } from './source-reliability.js';
import type { SourceReliabilityStore } from './source-reliability.port.js';
import { cancellationCodes, isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/** How long an observation's marker is kept: far longer than any redelivery or redrive. */
const MARKER_DAYS = 30;
/** The table's TTL attribute (infra/resources.ts TABLE.ttlAttribute; lib may not import infra). */
const TTL_ATTRIBUTE = 'expiresAt';

/**
 * Counts shards per domain. Every user's turns may report the same site, so one counts item
 * per domain would be a hot key: concurrent transactions on one item cancel each other
 * (TransactionConflict, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling)
 * and a partition takes at most 1,000 writes a second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-sharding.html).
 * A user's observations always go to the same shard (a hash of the user id), readers sum them.
 */
export const SOURCE_SHARDS = 8;
/** A transaction holds at most 100 items (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html). */
const MAX_TRANSACTION_ITEMS = 100;
const MAX_ATTEMPTS = 6;

export const sourceShard = (userId: string): number =>
  createHash('sha256').update(userId).digest().readUInt32BE(0) % SOURCE_SHARDS;

/**
 * Source reliability in the single table: `SOURCE#{domain}#{shard}` / `STATS` holds a share
 * of a domain's counts for all users; `USER#{u}` / `SOURCEOBS#{turnId}#{i}` marks an
 * observation as counted. One transaction per batch of a user's observations puts every
 * marker (if absent) and adds the batch's sums to each domain's shard, so a retried turn adds
 * nothing and a count never moves without its marker. Markers already there (an earlier
 * delivery counted them) are dropped and the rest is written again; a conflict with another
 * writer is retried with backoff.
 */
export class DynamoSourceReliabilityStore implements SourceReliabilityStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(
    storage: StorageTable,
    private readonly clock: { now(): Date },
  ) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async record(userId: string, observations: readonly SourceObservation[]): Promise<number> {
    let pending = [...new Map(observations.map((o) => [o.key, o])).values()];
    let added = 0;
    // Markers plus one update per domain must fit a transaction: a few observations per chunk suffice.
    const chunk = Math.floor(MAX_TRANSACTION_ITEMS / 2);
    while (pending.length > 0) {
      const part = pending.slice(0, chunk);
      pending = pending.slice(chunk);
      added += await this.recordChunk(userId, part);
    }
    return added;
  }

  /** One transaction (again without the observations already counted, or after a conflict). */
  private async recordChunk(userId: string, observations: readonly SourceObservation[]): Promise<number> {
    let left = [...observations];
    for (let attempt = 1; left.length > 0; attempt++) {
      try {
        await this.ddb.send(new TransactWriteCommand({ TransactItems: this.transactItems(userId, left) }));
        await this.markLatest(userId, left);
        return left.length;
      } catch (error) {
        const counted = countedMarkers(error, left.length);
        if (counted === null && !isConflict(error)) throw error;
        if (attempt >= MAX_ATTEMPTS) throw error;
        if (counted) left = left.filter((_, i) => !counted.has(i));
        else await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** attempt));
      }
    }
    return 0;
  }

  /**
   * Each shard's latest outcome time, moved only forward: writers of one shard finish in any
   * order, and a count update cannot take a maximum. A write that finds a later time changes nothing.
   */
  private async markLatest(userId: string, observations: readonly SourceObservation[]): Promise<void> {
    const latest = new Map<string, string>();
    for (const o of observations) if ((latest.get(o.domain) ?? '') < o.at) latest.set(o.domain, o.at);
    await Promise.all(
      [...latest.entries()].map(async ([domain, at]) => {
        try {
          await this.ddb.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { pk: keys.sourcePk(domain, sourceShard(userId)), sk: keys.sourceStatsSk },
              UpdateExpression: 'SET lastOutcomeAt = :at',
              ConditionExpression:
                'attribute_exists(pk) AND (attribute_not_exists(lastOutcomeAt) OR lastOutcomeAt < :at)',
              ExpressionAttributeValues: { ':at': at },
            }),
          );
        } catch (error) {
          if (!isConditionalCheckFailure(error)) throw error;
        }
      }),
    );
  }

  private transactItems(userId: string, observations: readonly SourceObservation[]) {
    const expiresAt = Math.floor(this.clock.now().getTime() / 1000) + MARKER_DAYS * 86_400;
    const markers = observations.map((o) => ({
      Put: {
        TableName: this.tableName,
        Item: {
          pk: keys.userPk(userId),
          sk: keys.sourceObservationSk(o.key),
          kind: 'source-observation',
          domain: o.domain,
          outcome: o.outcome,
          [TTL_ATTRIBUTE]: expiresAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    }));
    const byDomain = new Map<string, SourceObservation[]>();
    for (const o of observations) byDomain.set(o.domain, [...(byDomain.get(o.domain) ?? []), o]);
    const shard = sourceShard(userId);
    const counts = [...byDomain.entries()].map(([domain, os]) => {
      const n = (outcome: string) => os.filter((o) => o.outcome === outcome).length;
      const rated = os.filter((o) => o.quality !== undefined);
      return {
        Update: {
          TableName: this.tableName,
          Key: { pk: keys.sourcePk(domain, shard), sk: keys.sourceStatsSk },
          UpdateExpression:
            'SET kind = :kind, #domain = :domain ADD attempts :n, successes :s, blocked :b, failed :f, qualitySum :q, qualityCount :qc',
          ExpressionAttributeNames: { '#domain': 'domain' },
          ExpressionAttributeValues: {
            ':kind': 'source-stats',
            ':domain': domain,
            ':n': os.length,
            ':s': n('success'),
            ':b': n('blocked'),
            ':f': n('failed'),
            ':q': rated.reduce((sum, o) => sum + (o.quality ?? 0), 0),
            ':qc': rated.length,
          },
        },
      };
    });
    return [...markers, ...counts];
  }

  async stats(domains: readonly string[]): Promise<SourceStats[]> {
    const unique = [...new Set(domains)];
    const found = new Map<string, SourceStats>();
    const itemKeys = unique.flatMap((d) =>
      Array.from({ length: SOURCE_SHARDS }, (_, shard) => ({ pk: keys.sourcePk(d, shard), sk: keys.sourceStatsSk })),
    );
    for (const item of await this.batchGet(itemKeys)) {
      const domain = String(item.domain);
      const s = found.get(domain) ?? emptyStats(domain);
      const at = typeof item.lastOutcomeAt === 'string' ? item.lastOutcomeAt : null;
      found.set(domain, {
        ...s,
        attempts: s.attempts + Number(item.attempts ?? 0),
        successes: s.successes + Number(item.successes ?? 0),
        blocked: s.blocked + Number(item.blocked ?? 0),
        failed: s.failed + Number(item.failed ?? 0),
        qualitySum: s.qualitySum + Number(item.qualitySum ?? 0),
        qualityCount: s.qualityCount + Number(item.qualityCount ?? 0),
        lastOutcomeAt: at !== null && (s.lastOutcomeAt === null || at > s.lastOutcomeAt) ? at : s.lastOutcomeAt,
      });
    }
    return domains.map((d) => found.get(d) ?? emptyStats(d));
  }

  /** BatchGetItem, 100 keys a request, unprocessed keys asked again. */
  private async batchGet(itemKeys: ReadonlyArray<Record<string, string>>): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (let i = 0; i < itemKeys.length; i += 100) {
      let request: Record<string, { Keys: Array<Record<string, unknown>> }> | undefined = {
        [this.tableName]: { Keys: itemKeys.slice(i, i + 100) },
      };
      while (request && Object.keys(request).length > 0) {
        const res = await this.ddb.send(new BatchGetCommand({ RequestItems: request }));
        out.push(...(res.Responses?.[this.tableName] ?? []));
        request = res.UnprocessedKeys as typeof request;
      }
    }
    return out;
  }
}

/** The positions of markers a cancelled transaction found already there (counted before), or null if none was the cause. */
function countedMarkers(error: unknown, markers: number): Set<number> | null {
  const codes = cancellationCodes(error);
  if (codes === null) return null;
  const counted = new Set(codes.flatMap((code, i) => (i < markers && code === 'ConditionalCheckFailed' ? [i] : [])));
  return counted.size > 0 ? counted : null;
}

/** Cancelled because another request was changing one of the items at the same time. */
function isConflict(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TransactionConflictException') return true;
  return (cancellationCodes(error) ?? []).includes('TransactionConflict');
}
