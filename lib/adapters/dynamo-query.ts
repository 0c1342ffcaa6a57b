import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** Every item a Query returns, following LastEvaluatedKey. */
export async function queryAll(ddb: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Puts and deletes in BatchWriteItem requests of 25, retrying unprocessed items with backoff. */
export async function batchWriteAll(ddb: DynamoDBDocumentClient, tableName: string, requests: ReadonlyArray<Record<string, unknown>>): Promise<void> {
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
