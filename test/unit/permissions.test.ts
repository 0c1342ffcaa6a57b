/** The grant table's matching rules (infra/permissions.ts), which the least-privilege checks rely on. */
import { describe, expect, it } from 'vitest';
import { covers, keyMatches, PERMISSIONS } from '../../infra/permissions.js';

describe('the grant table', () => {
  it('matches S3 keys as IAM does: `*` spans slashes, the rest is literal', () => {
    expect(keyMatches('users/*/turns/*', 'users/u-1/turns/00000007/turn.md')).toBe(true);
    expect(keyMatches('users/*/turns/*', 'users/u-1/Knowledge/x.md')).toBe(false);
    expect(keyMatches('users/*/Logs/expiry/*', 'users/u-1/Logs/reflector/x.json')).toBe(false);
    expect(keyMatches('rejected/*', 'rejectedX/a')).toBe(false);
    expect(keyMatches('users/*', 'users/u.1/a+b.md')).toBe(true);
  });

  it('covers a request only with the right action on the right key, queue or service', () => {
    expect(covers(PERMISSIONS.signal, 'S3.PutObject', { key: 'users/u/turns/1/turn.md' })).toBe(true);
    expect(covers(PERMISSIONS.signal, 'S3.PutObject', { key: 'users/u/Knowledge/a.md' })).toBe(false);
    expect(covers(PERMISSIONS.signal, 'S3.GetObject', { key: 'users/u/turns/1/turn.md' })).toBe(false);
    expect(covers(PERMISSIONS.api, 'S3.HeadObject', { key: 'users/u/index/knowledge.json' })).toBe(true);
    expect(covers(PERMISSIONS.api, 'DynamoDB.DeleteItem')).toBe(false);
    expect(covers(PERMISSIONS.sweep, 'DynamoDB.DeleteItem')).toBe(true);
    expect(covers(PERMISSIONS.idle, 'SQS.SendMessage', { queue: 'reflection' })).toBe(true);
    expect(covers(PERMISSIONS.idle, 'SQS.SendMessage', { queue: 'idle' })).toBe(false);
    expect(covers(PERMISSIONS.reflector, 'BedrockRuntime.Converse')).toBe(true);
    expect(covers(PERMISSIONS.api, 'BedrockRuntime.Converse')).toBe(false);
    expect(covers(PERMISSIONS.api, 'S3.ListObjectsV2')).toBe(false);
  });
});
