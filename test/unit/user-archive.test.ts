/** What an import refuses (lib/archive/user-archive.ts), by field: another user's archive, records or documents outside the user's, an empty set. */
import { describe, expect, it } from 'vitest';
import { ARCHIVE_FORMAT, archiveProblems, type UserArchive } from '../../lib/archive/user-archive.js';

const archive = (over: Partial<UserArchive>): UserArchive => ({
  format: ARCHIVE_FORMAT,
  version: 1,
  userId: 'u-1',
  exportedAt: '2026-01-01T00:00:00.000Z',
  records: [],
  documents: [],
  ...over,
});

describe('an archive restored as a user', () => {
  it('is refused, naming the field, when it reaches outside the user or holds what DynamoDB refuses', () => {
    expect(
      archiveProblems(
        archive({
          records: [{ pk: 'USER#u-1', sk: 'TURN#0000000001', ids: { $set: ['a'] } }],
          documents: [{ path: 'turns/0000000001/x.md', text: 'hi' }],
        }),
        'u-1',
      ),
    ).toEqual([]);
    expect(archiveProblems(archive({}), 'u-2').map((p) => p.path)).toEqual(['body.archive.userId']);
    const bad = archive({
      records: [
        { pk: 'USER#u-2', sk: 'TURN#1' },
        { pk: 'GLOBAL', sk: '' },
        { pk: 'USER#u-1', sk: 'EPHEMERA#s', ids: { $set: [] } },
      ],
      documents: [
        { path: '../u-2/Knowledge/x.md', text: 'x' },
        { path: '/abs.md', text: 'x' },
        { path: 'a//b.md', text: 'x' },
      ],
    });
    expect(archiveProblems(bad, 'u-1').map((p) => p.path)).toEqual([
      'body.archive.records.0.pk',
      'body.archive.records.1.pk',
      'body.archive.records.1.sk',
      'body.archive.records.2.ids',
      'body.archive.documents.0.path',
      'body.archive.documents.1.path',
      'body.archive.documents.2.path',
    ]);
  });
});
