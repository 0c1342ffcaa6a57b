/**
 * Which kinds of item a DynamoDB request's capacity went to, for the request
 * ledger's opt-in breakdown: an item's kind is its sort key up to and including the first `#`
 * (`TURN#`, `SEARCHCHANGE#`) or the whole sort key (`SIGNAL`, `SEARCHINDEX`). A request that
 * touches several items (BatchWriteItem, TransactWriteItems, BatchGetItem) splits its units
 * between them by the write units each would cost alone; a Query is put on the prefix its key
 * condition names for `sk` (or `{index}:{pk prefix}` on an index). The GSI share of a write
 * (ReturnConsumedCapacity=INDEXES) is kept apart as `{kind} (gsi1)`.
 */
import { writeUnits } from '../../lib/kernel/dynamo-item-size.adapter.js';

/** One item a request touched and its weight in the request's units. */
export interface TouchedItem {
  kind: string;
  weight: number;
}

/** `TURN#000012` → `TURN#`; `SIGNAL` → `SIGNAL`. */
export const kindOfKey = (raw: unknown): string => {
  // The document client's input, or a low-level client's ({ S: '…' }).
  const key = typeof raw === 'object' && raw !== null && 'S' in raw ? (raw as { S: unknown }).S : raw;
  if (typeof key !== 'string') return '?';
  const i = key.indexOf('#');
  return i < 0 ? key : key.slice(0, i + 1);
};

const ofItem = (item: Record<string, unknown> | undefined, weigh: boolean): TouchedItem => ({
  kind: kindOfKey(item?.sk),
  weight: weigh && item ? writeUnits(item) : 1,
});

type Input = Record<string, unknown>;

function ofWriteRequest(r: Input): TouchedItem {
  const put = r.PutRequest as { Item?: Input } | undefined;
  if (put) return ofItem(put.Item, true);
  return ofItem((r.DeleteRequest as { Key?: Input } | undefined)?.Key, false);
}

function ofTransactItem(t: Input): TouchedItem {
  const put = t.Put as { Item?: Input } | undefined;
  if (put) return ofItem(put.Item, true);
  const other = (t.Update ?? t.Delete ?? t.ConditionCheck ?? t.Get) as { Key?: Input } | undefined;
  return ofItem(other?.Key, false);
}

/** The `sk` value a Query's key condition names, or the partition key's prefix on an index. */
function ofQuery(input: Input): TouchedItem {
  const cond = String(input.KeyConditionExpression ?? '');
  const values = (input.ExpressionAttributeValues ?? {}) as Input;
  const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
  const sk = /begins_with\(\s*sk\s*,\s*(:\w+)\s*\)|\bsk\s*(?:=|<=?|>=?|BETWEEN)\s*(:\w+)/.exec(cond);
  if (index === undefined && sk) return { kind: kindOfKey(values[(sk[1] ?? sk[2]) as string]), weight: 1 };
  const pk = /(\w+)\s*=\s*(:\w+)/.exec(cond);
  return { kind: `${index ?? 'table'}:${kindOfKey(pk ? values[pk[2] as string] : undefined)}`, weight: 1 };
}

/** The items a DynamoDB request (its document-client input) touched, each with its weight. */
export function touchedItems(operation: string, input: Input): TouchedItem[] {
  switch (operation) {
    case 'PutItem':
      return [ofItem(input.Item as Input, true)];
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [ofItem(input.Key as Input, false)];
    case 'BatchWriteItem':
      return Object.values((input.RequestItems ?? {}) as Record<string, Input[]>).flatMap((rs) =>
        rs.map(ofWriteRequest),
      );
    case 'BatchGetItem':
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: Input[] }>).flatMap((r) =>
        (r.Keys ?? []).map((k) => ofItem(k, false)),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return ((input.TransactItems ?? []) as Input[]).map(ofTransactItem);
    case 'Query':
      return [ofQuery(input)];
    default:
      return [{ kind: operation, weight: 1 }];
  }
}

/** Splits `units` between the items by weight, summed per kind. */
export function splitUnits(items: readonly TouchedItem[], units: number): Map<string, number> {
  const out = new Map<string, number>();
  const total = items.reduce((n, i) => n + i.weight, 0);
  if (total === 0 || units === 0) return out;
  for (const i of items) out.set(i.kind, (out.get(i.kind) ?? 0) + (units * i.weight) / total);
  return out;
}
