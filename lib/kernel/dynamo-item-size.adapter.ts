/**
 * The size DynamoDB bills and limits an item by, computed from the item as the document
 * client marshals it (objects → M, arrays → L, numbers → N, strings → S, booleans → BOOL,
 * null → NULL), by the rules AWS publishes in "DynamoDB item sizes and formats"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * attribute names and strings count their UTF-8 bytes; a number counts about one byte per
 * two significant digits plus one; a List or Map costs 3 bytes plus one byte per element.
 * A write costs one write unit per started KB of it, and an item may not exceed 400 KB.
 */
const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

function numberSize(n: number): number {
  const digits = Math.abs(n).toExponential().replace(/e.*$/, '').replace('.', '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** The size of one attribute value (without its name). */
export function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number') return numberSize(value);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + valueSize(v), 0);
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return 3 + entries.reduce((n, [k, v]) => n + 1 + utf8(k) + valueSize(v), 0);
  }
  throw new Error(`no DynamoDB size for a ${typeof value}`);
}

/** An item's size in bytes: its attributes' names and values. */
export function itemSize(item: Record<string, unknown>): number {
  return Object.entries(item)
    .filter(([, v]) => v !== undefined)
    .reduce((n, [k, v]) => n + utf8(k) + valueSize(v), 0);
}

/** Write units a standard put of the item costs: one per started KB. */
export const writeUnits = (item: Record<string, unknown>): number => Math.max(1, Math.ceil(itemSize(item) / 1024));
