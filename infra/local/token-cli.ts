/**
 * `npm run token -- --user ID [--user ID …] [--admin] [--subject NAME]` — print a bearer
 * token for the running local harness's API: scoped to the given users, or an administrator's.
 */
import { parseArgs } from 'node:util';
import { readStackInfo } from './stack-info.js';
import { mintToken } from './tokens.js';

const { values } = parseArgs({
  options: {
    user: { type: 'string', multiple: true, default: [] },
    admin: { type: 'boolean', default: false },
    subject: { type: 'string' },
  },
  strict: true,
});
const users = values.user ?? [];
if (!values.admin && users.length === 0) {
  console.error('give --user ID (one or more) or --admin');
  process.exit(2);
}
const info = readStackInfo();
console.log(
  await mintToken(info.tokenSecret, {
    sub: values.subject ?? (values.admin ? 'local-admin' : `local-${users.join('+')}`),
    users,
    admin: values.admin,
  }),
);
