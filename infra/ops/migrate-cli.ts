/**
 * npm run migrate -- turn-keys --stage NAME [--region R]
 * npm run migrate -- turn-keys --local [--state FILE]
 *
 * Runs a data migration against a stage's table with the caller's credentials. `turn-keys`
 * (lib/turns/turn-keys-migration.adapter.ts, docs/data-model.md "Window reads by key range"):
 * batch logs and summaries still under their id alone move under their last turn. Run it
 * once after the deploy that brought the migration, with the reflector paused; it needs
 * dynamodb:Scan, PutItem, DeleteItem and BatchWriteItem on the table
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html:
 * a transaction's Put and Delete need their own actions). Run again, it moves nothing.
 * The last line is the counts as JSON. Exit 0 when done, 1 when it failed, 2 for a usage error.
 */
import { parseArgs } from 'node:util';
import { moveToTurnKeys } from '../../lib/turns/turn-keys-migration.adapter.js';
import { tableTarget, validTarget } from './stage-target.js';

const MIGRATIONS = { 'turn-keys': moveToTurnKeys } as const;
const USAGE = `usage: npm run migrate -- ${Object.keys(MIGRATIONS).join('|')} --stage NAME [--region REGION]  |  npm run migrate -- NAME --local [--state FILE]`;
const { values, positionals } = parseArgs({
  options: {
    stage: { type: 'string' },
    local: { type: 'boolean', default: false },
    state: { type: 'string' },
    region: { type: 'string' },
  },
  allowPositionals: true,
  strict: true,
});
const name = positionals[0] as keyof typeof MIGRATIONS | undefined;
if (!validTarget(values) || name === undefined || !(name in MIGRATIONS) || positionals.length !== 1) {
  console.error(USAGE);
  process.exit(2);
}
try {
  const target = await tableTarget(values);
  const counts = await MIGRATIONS[name](target.ddb, target.tableName);
  target.destroy();
  console.error(`migration ${name} on ${target.label} (${target.tableName}): done`);
  console.log(JSON.stringify({ migration: name, ...counts }));
  process.exit(0);
} catch (error) {
  console.error(`migration ${name} failed: ${(error as Error).message}`);
  process.exit(1);
}
