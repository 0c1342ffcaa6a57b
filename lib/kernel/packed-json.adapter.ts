import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * JSON kept in a DynamoDB item packed: raw-deflated, in base64. A write costs a write
 * unit per started KB of the item, a read a read unit per started 4 KB, and a GSI copy of the
 * item as much again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * the reflector's records of a few KB of JSON (a model answer, a batch log, a sleep-time run)
 * take about half the units packed. A string, not Binary, so the user archive and the state
 * dumps carry it as text, as the signal state's (`packState`).
 */
export const packJson = (value: unknown): string =>
  deflateRawSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('base64');

/** The value `packJson` packed (throws on text it did not make). */
export const unpackJson = (packed: string): unknown =>
  JSON.parse(inflateRawSync(Buffer.from(packed, 'base64')).toString('utf8')) as unknown;
