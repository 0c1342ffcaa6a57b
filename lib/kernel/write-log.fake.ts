/**
 * The write log the recording fakes share: every write as the storage key the real adapter
 * would write it under (lib/kernel/memory-paths.ts), and the checks a fuzz case asks of it.
 */
import { DomainSchema } from '../../events/common.js';
import { GLOBAL_USER } from '../items/memory-item.js';
import { keys, rejectedPrefix, userPrefix } from './memory-paths.js';
import { SOURCE_SHARDS } from '../sources/dynamo-source-reliability-store.adapter.js';

/**
 * Does `key` stay under `prefix`, however it is read? Rejects keys that hold control
 * characters, and resolves `.`/`..` segments with `/` and `\` both as separators (as a
 * file-system sync or a careless consumer would) before comparing.
 */
export function keyStaysUnder(key: string, prefix: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
  if (/[\u0000-\u001f\u007f]/.test(key)) return false;
  if (!key.startsWith(prefix)) return false;
  const out: string[] = [];
  for (const segment of key.split(/[\\/]/)) {
    if (segment === '..') {
      if (out.length === 0) return false;
      out.pop();
    } else if (segment !== '.' && segment !== '') out.push(segment);
  }
  const base = prefix.split('/').filter(Boolean);
  return base.every((s, i) => out[i] === s) && out.length > base.length;
}

/** One write: whose data it is (`null` for the shared rejected-events log) and where it lands. */
export interface Write {
  store: string;
  user: string | null;
  /** An S3 key (`users/…`, `rejected/…`) or a DynamoDB `pk|sk`; absent for queue messages. */
  key?: string;
  /** A DynamoDB item's size as the adapter would write it (its JSON, UTF-8). */
  bytes?: number;
}

/** DynamoDB refuses items over 400 KB. */
export const DYNAMODB_ITEM_LIMIT_BYTES = 400 * 1024;

/**
 * An item's size as DynamoDB counts it: attribute names and string values in UTF-8 bytes,
 * numbers by their digits, 3 bytes per list or map plus 1 per element.
 */
export function dynamoItemBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.]/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (value === undefined) return 0;
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + dynamoItemBytes(v), 0);
  if (typeof value === 'object') {
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (n, [k, v]) => (v === undefined ? n : n + 1 + Buffer.byteLength(k, 'utf8') + dynamoItemBytes(v)),
        0,
      )
    );
  }
  return 0;
}

const itemBytes = (item: unknown): number => {
  try {
    return dynamoItemBytes(item);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
};

export class WriteLog {
  readonly writes: Write[] = [];
  add(store: string, user: string | null, key?: string): void {
    this.writes.push({ store, user, ...(key !== undefined ? { key } : {}) });
  }
  /** A DynamoDB item write, with the item (to size it). */
  addItem(store: string, user: string, key: string, item: unknown): void {
    this.writes.push({ store, user, key, bytes: itemBytes(item) });
  }
  /**
   * Writes that left their bounds: a user outside `allowed`, an S3 key outside its user's
   * prefix (or `rejected/` for the shared log), a DynamoDB key outside the user's partition,
   * a DynamoDB item DynamoDB would refuse for its size.
   */
  problems(allowed: ReadonlySet<string>): string[] {
    const bad: string[] = [];
    for (const w of this.writes) {
      if (w.bytes !== undefined && w.bytes > DYNAMODB_ITEM_LIMIT_BYTES)
        bad.push(`${w.store}: a DynamoDB item of ${w.bytes} bytes, over the 400 KB limit (${w.key ?? ''})`);
      if (w.user === null) {
        // Shared: the rejected-events log in S3, and source reliability counts (a domain's own partition).
        if (w.key?.includes('|')) {
          const [pk, sk] = w.key.split('|');
          const shard = /^SOURCE#(.+)#(\d+)$/.exec(pk ?? '');
          if (
            !shard ||
            !DomainSchema.safeParse(shard[1]).success ||
            Number(shard[2]) >= SOURCE_SHARDS ||
            sk !== keys.sourceStatsSk
          )
            bad.push(
              `${w.store}: shared DynamoDB key ${JSON.stringify(w.key.slice(0, 200))} is not a domain's source counts`,
            );
        } else if (w.key !== undefined && !keyStaysUnder(w.key, rejectedPrefix()))
          bad.push(`${w.store}: shared-log key ${JSON.stringify(w.key)} leaves rejected/`);
        continue;
      }
      if (!allowed.has(w.user))
        bad.push(`${w.store}: wrote for user ${JSON.stringify(w.user)} (allowed: ${[...allowed].join(', ')})`);
      if (w.key === undefined) continue;
      if (w.key.includes('|')) {
        const pk = w.key.slice(0, w.key.indexOf('|'));
        const expected = w.user === GLOBAL_USER ? 'GLOBAL' : keys.userPk(w.user);
        if (pk !== expected) bad.push(`${w.store}: DynamoDB partition ${JSON.stringify(pk)} is not ${expected}`);
      } else if (!keyStaysUnder(w.key, userPrefix(w.user)))
        bad.push(`${w.store}: S3 key ${JSON.stringify(w.key.slice(0, 200))} leaves ${userPrefix(w.user)}`);
    }
    return bad;
  }
}
