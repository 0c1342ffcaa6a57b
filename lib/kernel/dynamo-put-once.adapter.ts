import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailure } from './dynamo-errors.adapter.js';

/**
 * Write an item only if none has its key: the first write wins and a retry leaves it as it
 * is (idempotent commit records and other records). Returns whether this call wrote it.
 */
export async function putOnce(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
): Promise<boolean> {
  try {
    await ddb.send(
      new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}
