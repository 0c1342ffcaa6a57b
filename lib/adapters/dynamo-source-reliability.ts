import { BatchGetCommand, type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../domain/memory-paths.js';
import { emptyStats, type SourceObservation, type SourceStats } from '../domain/source-reliability.js';
import type { SourceReliabilityStore } from '../ports.js';

/** How long an observation's marker is kept: far longer than any redelivery or redrive. */
const MARKER_DAYS = 30;
/** The table's TTL attribute (infra/resources.ts TABLE.ttlAttribute; lib may not import infra). */
const TTL_ATTRIBUTE = 'expiresAt';

/**
 * Source reliability in the single table: `SOURCE#{domain}` / `STATS` holds a domain's
 * counts for all users; `USER#{u}` / `SOURCEOBS#{turnId}#{i}` marks an observation as
 * counted. Each observation is one transaction — put the marker if absent, add to the
 * counts — so a retried turn adds nothing, and a count never moves without its marker.
 */
export class DynamoSourceReliabilityStore implements SourceReliabilityStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: { now(): Date },
  ) {}

  async record(userId: string, observations: readonly SourceObservation[]): Promise<number> {
    const expiresAt = Math.floor(this.clock.now().getTime() / 1000) + MARKER_DAYS * 86_400;
    let added = 0;
    for (const o of observations) {
      try {
        await this.ddb.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.tableName,
                  Item: { pk: keys.userPk(userId), sk: keys.sourceObservationSk(o.key), kind: 'source-observation', domain: o.domain, outcome: o.outcome, [TTL_ATTRIBUTE]: expiresAt },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Update: {
                  TableName: this.tableName,
                  Key: { pk: keys.sourcePk(o.domain), sk: keys.sourceStatsSk },
                  UpdateExpression:
                    'SET kind = :kind, #domain = :domain, lastOutcomeAt = :at ADD attempts :one, successes :s, blocked :b, failed :f, qualitySum :q, qualityCount :qc',
                  ExpressionAttributeNames: { '#domain': 'domain' },
                  ExpressionAttributeValues: {
                    ':kind': 'source-stats',
                    ':domain': o.domain,
                    ':at': o.at,
                    ':one': 1,
                    ':s': o.outcome === 'success' ? 1 : 0,
                    ':b': o.outcome === 'blocked' ? 1 : 0,
                    ':f': o.outcome === 'failed' ? 1 : 0,
                    ':q': o.quality ?? 0,
                    ':qc': o.quality !== undefined ? 1 : 0,
                  },
                },
              },
            ],
          }),
        );
        added++;
      } catch (error) {
        // The marker exists: this observation was counted by an earlier delivery.
        if (isMarkerConflict(error)) continue;
        throw error;
      }
    }
    return added;
  }

  async stats(domains: readonly string[]): Promise<SourceStats[]> {
    const unique = [...new Set(domains)];
    const found = new Map<string, SourceStats>();
    for (let i = 0; i < unique.length; i += 100) {
      let request: Record<string, { Keys: Array<Record<string, string>> }> | undefined = {
        [this.tableName]: { Keys: unique.slice(i, i + 100).map((d) => ({ pk: keys.sourcePk(d), sk: keys.sourceStatsSk })) },
      };
      while (request && Object.keys(request).length > 0) {
        const res = await this.ddb.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of res.Responses?.[this.tableName] ?? []) {
          const domain = String(item.domain);
          found.set(domain, {
            ...emptyStats(domain),
            attempts: Number(item.attempts ?? 0),
            successes: Number(item.successes ?? 0),
            blocked: Number(item.blocked ?? 0),
            failed: Number(item.failed ?? 0),
            qualitySum: Number(item.qualitySum ?? 0),
            qualityCount: Number(item.qualityCount ?? 0),
            lastOutcomeAt: typeof item.lastOutcomeAt === 'string' ? item.lastOutcomeAt : null,
          });
        }
        request = res.UnprocessedKeys as typeof request;
      }
    }
    return domains.map((d) => found.get(d) ?? emptyStats(d));
  }
}

/** A cancelled transaction whose first item (the marker's put) failed its condition. */
function isMarkerConflict(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons[0]?.Code === 'ConditionalCheckFailed';
}
