/** The request ledger's split of DynamoDB units by item kind (infra/local/item-kinds.ts). */
import { describe, expect, it } from 'vitest';
import { kindOfKey, splitUnits, touchedItems } from '../../infra/local/item-kinds.js';

describe('DynamoDB units by item kind', () => {
  it('names a kind by its sort key up to the first #, or the whole key', () => {
    expect(kindOfKey('TURN#0000000012')).toBe('TURN#');
    expect(kindOfKey('SIGNAL')).toBe('SIGNAL');
    expect(kindOfKey({ S: 'SEARCHCHANGE#2026-11-27T08:00:00.000Z#ab' })).toBe('SEARCHCHANGE#');
  });

  it('splits a BatchWriteItem by what each item would cost alone, deletes at one unit', () => {
    const items = touchedItems('BatchWriteItem', {
      RequestItems: {
        t: [
          { PutRequest: { Item: { pk: 'USER#u', sk: 'TURN#1', doc: 'x'.repeat(1500) } } },
          { PutRequest: { Item: { pk: 'USER#u', sk: 'SEARCHCHANGE#a', ids: ['turn:1'] } } },
          { DeleteRequest: { Key: { pk: 'USER#u', sk: 'SEARCHCHANGE#b' } } },
        ],
      },
    });
    expect(items).toEqual([
      { kind: 'TURN#', weight: 2 },
      { kind: 'SEARCHCHANGE#', weight: 1 },
      { kind: 'SEARCHCHANGE#', weight: 1 },
    ]);
    expect(Object.fromEntries(splitUnits(items, 4))).toEqual({ 'TURN#': 2, 'SEARCHCHANGE#': 2 });
  });

  it('puts a Query on the sort-key prefix it names, or on the index and partition it reads', () => {
    expect(
      touchedItems('Query', {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': 'USER#u', ':p': 'STAGED#' },
      }),
    ).toEqual([{ kind: 'STAGED#', weight: 1 }]);
    expect(
      touchedItems('Query', {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': 'ACTIVITY#2026-01-01#3' },
      }),
    ).toEqual([{ kind: 'gsi1:ACTIVITY#', weight: 1 }]);
  });
});
