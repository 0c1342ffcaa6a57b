import { type DynamoDBDocumentClient, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { currentSk, keys } from '../kernel/memory-paths.js';
import { cancellationCodes } from '../kernel/dynamo-errors.adapter.js';
import { batchWriteAll } from '../kernel/dynamo-query.adapter.js';

/**
 * The migration of 2026-11-27 (docs/data-model.md, "Window reads by key range"): every batch log
 * and summary still under its id alone (`BATCH#{id}`, `SUMMARY#{id}`) moved under its last turn
 * (`keys.batchSk`, `keys.summarySk`), for a stage that held items before it. Run once by an
 * operator, with the table's full-access credentials and the reflector paused, after the deploy.
 *
 * One Scan of the table for the two kinds, filtered on their prefixes (a Scan reads, and is
 * billed for, the whole table: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html),
 * then per item one TransactWriteItems: the item put under its new key if none is there, and
 * the old one deleted, both or neither
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
 * An item the new code already wrote under the new key (a batch redelivered across the deploy)
 * stays, and the old one is deleted. Run again, it finds nothing to move.
 */
export async function moveToTurnKeys(
  ddb: DynamoDBDocumentClient,
  tableName: string,
): Promise<{ moved: number; alreadyMoved: number }> {
  let moved = 0;
  let alreadyMoved = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(sk, :b) OR begins_with(sk, :s)',
        ExpressionAttributeValues: { ':b': keys.batchPrefix, ':s': keys.summaryPrefix },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const sk = String(item.sk);
      const next = currentSk(sk);
      if (next === sk) continue;
      try {
        await ddb.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: { ...item, sk: next },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Delete: { TableName: tableName, Key: { pk: item.pk, sk }, ConditionExpression: 'attribute_exists(pk)' },
              },
            ],
          }),
        );
        moved += 1;
      } catch (error) {
        // Which condition failed: the new key's (already written there) or the old one's (moved by another run).
        const [put, remove] = cancellationCodes(error) ?? [];
        if (put === 'ConditionalCheckFailed') {
          await batchWriteAll(ddb, tableName, [{ DeleteRequest: { Key: { pk: item.pk, sk } } }]);
          alreadyMoved += 1;
        } else if (remove !== 'ConditionalCheckFailed') throw error;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { moved, alreadyMoved };
}
