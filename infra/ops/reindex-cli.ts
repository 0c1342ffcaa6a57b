/**
 * npm run reindex -- --stage NAME --user ID [--token JWT] [--region R]
 * npm run reindex -- --local --user ID [--state FILE]
 *
 * Rebuilds one user's (or GLOBAL's) search index from their stores through the stage's
 * memory API (`POST /v1/users/{u}/search-index/rebuild`, administrators only: the api
 * function rebuilds with the stage's own settings, its embedding model included). The token
 * is an administrator's (`--token` or REINDEX_TOKEN); locally the stack's. The last line is
 * the answer as JSON. Exit 0 when rebuilt, 1 when it failed, 2 for a usage error.
 */
import { parseArgs } from 'node:util';
import { MemoryClient } from '../../functions/api/client.js';
import { apiTarget, validTarget } from './stage-target.js';

const USAGE =
  'usage: npm run reindex -- --stage NAME --user ID [--token JWT] [--region REGION]  |  npm run reindex -- --local --user ID [--state FILE]';
const { values } = parseArgs({
  options: {
    stage: { type: 'string' },
    local: { type: 'boolean', default: false },
    state: { type: 'string' },
    user: { type: 'string' },
    token: { type: 'string' },
    region: { type: 'string' },
  },
  strict: true,
});
if (!validTarget(values) || !values.user) {
  console.error(USAGE);
  process.exit(2);
}
try {
  const target = await apiTarget(values, 'REINDEX_TOKEN');
  const userId = values.user;
  const answer = await new MemoryClient(target.apiUrl, () => target.token).call('reindex', { params: { userId } });
  const { items, version, lost } = answer.rebuilt as { items: number; version: number; lost: boolean };
  console.error(
    lost
      ? `the search index of ${userId} moved during the rebuild (another compaction): ask again`
      : `rebuilt the search index of ${userId} on ${target.label}: ${items} item ids read, version ${version}`,
  );
  console.log(JSON.stringify({ userId, items, version, lost }));
  process.exit(lost ? 1 : 0);
} catch (error) {
  console.error(`reindex failed: ${(error as Error).message}`);
  process.exit(1);
}
