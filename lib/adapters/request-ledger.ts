/**
 * Counts every AWS request the handlers make, by service and operation, through an SDK
 * middleware on each client — and, for DynamoDB, the capacity units each request used
 * (it asks for ReturnConsumedCapacity=TOTAL, which costs nothing). Benchmarks read it;
 * in Lambda it is a few map increments per request.
 */
import type { MetadataBearer } from '@smithy/types';

export interface LedgerEntry {
  requests: number;
  readUnits: number;
  writeUnits: number;
}

const ledger = new Map<string, LedgerEntry>();

export const requestLedger = {
  snapshot(): Record<string, LedgerEntry> {
    return Object.fromEntries([...ledger.entries()].map(([k, v]) => [k, { ...v }]));
  },
  reset(): void {
    ledger.clear();
  },
};

/** Difference of two snapshots (after − before). */
export function ledgerDelta(before: Record<string, LedgerEntry>, after: Record<string, LedgerEntry>): Record<string, LedgerEntry> {
  const out: Record<string, LedgerEntry> = {};
  for (const [k, v] of Object.entries(after)) {
    const b = before[k] ?? { requests: 0, readUnits: 0, writeUnits: 0 };
    const d = { requests: v.requests - b.requests, readUnits: v.readUnits - b.readUnits, writeUnits: v.writeUnits - b.writeUnits };
    if (d.requests !== 0) out[k] = d;
  }
  return out;
}

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** Add the counting middleware to a client (any AWS SDK v3 client). */
export function instrument<C extends { middlewareStack: { add: (...args: never[]) => void } }>(client: C, service: string): C {
  const add = client.middlewareStack.add as unknown as (mw: unknown, options: { step: string; name: string }) => void;
  add(
    (next: (args: { input: Record<string, unknown> }) => Promise<{ output: MetadataBearer & { ConsumedCapacity?: Capacity | Capacity[] } }>, context: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        if (service === 'DynamoDB' && ('TableName' in args.input || 'RequestItems' in args.input || 'TransactItems' in args.input)) {
          args.input.ReturnConsumedCapacity ??= 'TOTAL';
        }
        const result = await next(args);
        const key = `${service}.${operation}`;
        const entry = ledger.get(key) ?? { requests: 0, readUnits: 0, writeUnits: 0 };
        entry.requests += 1;
        const consumed = result.output.ConsumedCapacity;
        for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
          const units = c.CapacityUnits ?? 0;
          if (WRITES.has(operation)) entry.writeUnits += c.WriteCapacityUnits ?? units;
          else entry.readUnits += c.ReadCapacityUnits ?? units;
        }
        ledger.set(key, entry);
        return result;
      },
    { step: 'initialize', name: 'requestLedger' },
  );
  return client;
}
