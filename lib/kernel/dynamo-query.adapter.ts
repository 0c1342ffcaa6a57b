import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** Every item a Query returns, following LastEvaluatedKey. */
export async function queryAll(
  ddb: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * The first `count` items a Query returns, in its order (newest first with `ScanIndexForward`
 * false: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.KeyConditionExpressions.html),
 * reading no more than it needs: each request's `Limit` is what the page still lacks, and
 * `LastEvaluatedKey` is followed only while it lacks some — a response also stops at 1 MB
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html).
 * `Limit` counts the items read before a FilterExpression drops any
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Other.html#Query.Limit),
 * so with a filter a request after one that dropped items reads at least twice as many as it
 * dropped (`ScannedCount` − `Count`): a run of them is crossed in a few requests, and the read
 * passes the page by at most twice the items dropped. Read units are those of the items read,
 * filtered or projected away or not (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html).
 */
export async function queryFirst(
  ddb: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>,
  count: number,
): Promise<Array<Record<string, unknown>>> {
  // An empty page reads nothing (and sends no Limit of 0).
  if (count < 1) return [];
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  let dropped = 0;
  do {
    const res = await ddb.send(
      new QueryCommand({ ...input, Limit: Math.max(count - items.length, 2 * dropped), ExclusiveStartKey: start }),
    );
    items.push(...(res.Items ?? []));
    dropped = (res.ScannedCount ?? 0) - (res.Count ?? 0);
    start = res.LastEvaluatedKey;
  } while (start && items.length < count);
  return items.slice(0, count);
}

/** Puts and deletes in BatchWriteItem requests of 25, retrying unprocessed items with backoff. */
export async function batchWriteAll(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  requests: ReadonlyArray<Record<string, unknown>>,
): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: Array<Record<string, unknown>> | undefined = requests.slice(i, i + 25);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('BatchWrite kept returning unprocessed items');
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
      const res = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
      pending = res.UnprocessedItems?.[tableName] as Array<Record<string, unknown>> | undefined;
    }
  }
}

/**
 * Every item of these keys, 100 keys a BatchGetItem (its limit) with unprocessed keys
 * retried after a backoff, as AWS advises
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html).
 * Eventually consistent unless asked: half the read units of a consistent read, each item
 * rounded up to 4 KB whatever the projection
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 */
export async function batchGetAll(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  itemKeys: ReadonlyArray<Record<string, unknown>>,
  options: { projection?: string; names?: Record<string, string>; consistent?: boolean } = {},
): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < itemKeys.length; i += 100) {
    let pending: Array<Record<string, unknown>> | undefined = itemKeys.slice(i, i + 100);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('BatchGet kept returning unprocessed keys');
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
      const res = await ddb.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: pending,
              ConsistentRead: options.consistent ?? false,
              ...(options.projection ? { ProjectionExpression: options.projection } : {}),
              ...(options.names ? { ExpressionAttributeNames: options.names } : {}),
            },
          },
        }),
      );
      out.push(...(res.Responses?.[tableName] ?? []));
      pending = res.UnprocessedKeys?.[tableName]?.Keys as Array<Record<string, unknown>> | undefined;
    }
  }
  return out;
}
