/** The grant table's KMS rules (infra/permissions.ts); what the grants allow is checked by the real IAM engine (iam-enforcement.test.ts). */
import { describe, expect, it } from 'vitest';
import { type FunctionKey, kmsImplied, PERMISSIONS } from '../../infra/permissions.js';

describe('the grant table', () => {
  it('lists for each function exactly the KMS actions its other grants need, per service', () => {
    for (const fn of Object.keys(PERMISSIONS) as FunctionKey[]) {
      const sorted = (kms: object) =>
        Object.fromEntries(
          Object.entries(kms).map(([service, actions]) => [service, [...(actions as string[])].sort()]),
        );
      expect(sorted(PERMISSIONS[fn].kms), fn).toEqual(sorted(kmsImplied(PERMISSIONS[fn])));
    }
    // What the rules say, on the cases that matter.
    expect(
      kmsImplied({
        dynamodb: [],
        s3: { 'a/*': ['DeleteObject'] },
        sends: [],
        listBucket: false,
        consumes: null,
        model: false,
      }),
    ).toEqual({});
    expect(
      kmsImplied({
        dynamodb: ['GetItem'],
        s3: { 'a/*': ['GetObject'] },
        sends: [],
        listBucket: false,
        consumes: null,
        model: false,
      }),
    ).toEqual({
      dynamodb: ['Decrypt', 'DescribeKey'],
      s3: ['Decrypt'],
    });
    expect(
      kmsImplied({
        dynamodb: [],
        s3: { 'a/*': ['PutObject'] },
        sends: [],
        listBucket: false,
        consumes: 'job',
        model: false,
      }),
    ).toEqual({
      s3: ['GenerateDataKey'],
      sqs: ['Decrypt', 'GenerateDataKey'],
    });
    expect(
      kmsImplied({ dynamodb: [], s3: {}, sends: ['idle'], listBucket: false, consumes: null, model: false }),
    ).toEqual({ sqs: ['Decrypt', 'GenerateDataKey'] });
  });
});
