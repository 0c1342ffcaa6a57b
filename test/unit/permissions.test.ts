/** The grant table's matching rules (infra/permissions.ts), which the least-privilege checks rely on. */
import { describe, expect, it } from 'vitest';
import { covers, type FunctionKey, keyMatches, kmsImplied, PERMISSIONS } from '../../infra/permissions.js';

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

  it("lists for each function exactly the KMS actions its other grants need, per service", () => {
    for (const fn of Object.keys(PERMISSIONS) as FunctionKey[]) {
      const sorted = (kms: object) => Object.fromEntries(Object.entries(kms).map(([service, actions]) => [service, [...(actions as string[])].sort()]));
      expect(sorted(PERMISSIONS[fn].kms), fn).toEqual(sorted(kmsImplied(PERMISSIONS[fn])));
    }
    // What the rules say, on the cases that matter.
    expect(kmsImplied({ dynamodb: [], s3: { 'a/*': ['DeleteObject'] }, sends: [], consumes: null, model: false })).toEqual({});
    expect(kmsImplied({ dynamodb: ['GetItem'], s3: { 'a/*': ['GetObject'] }, sends: [], consumes: null, model: false })).toEqual({
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt'],
    });
    expect(kmsImplied({ dynamodb: [], s3: { 'a/*': ['PutObject'] }, sends: [], consumes: 'reflection', model: false })).toEqual({
      s3: ['GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    });
    expect(kmsImplied({ dynamodb: [], s3: {}, sends: ['idle'], consumes: null, model: false })).toEqual({ sqs: ['Decrypt', 'GenerateDataKey'] });
  });
});
