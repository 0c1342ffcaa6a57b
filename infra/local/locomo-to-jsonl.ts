/**
 * npm run locomo -- FILE [--twice]   print a LoCoMo conversation as turn.saved JSONL
 * (--twice: the whole sequence twice, to exercise idempotency).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { replayLinesFromFile } from './locomo.js';

const { values, positionals } = parseArgs({
  options: { twice: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const file = positionals[0];
if (!file) {
  console.error('usage: npm run locomo -- FILE [--twice]');
  process.exit(2);
}
const { lines, format } = replayLinesFromFile(readFileSync(file, 'utf8'), basename(file));
if (format !== 'locomo') {
  console.error(`${file} is not a LoCoMo conversation`);
  process.exit(2);
}
const out = values.twice ? [...lines, ...lines] : lines;
process.stdout.write(`${out.join('\n')}\n`);
