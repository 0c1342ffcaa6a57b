/**
 * The XML of the versioned local bucket's answers (versioned-s3.ts): ListObjectVersions'
 * ListVersionsResult (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html),
 * DeleteObjects' request and DeleteResult (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html)
 * and S3's error document (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
 */
/** One version of a key: an object (its bytes here only while noncurrent) or a delete marker. */
export interface StoredVersion {
  versionId: string;
  deleteMarker: boolean;
  lastModified: Date;
  etag?: string;
  size?: number;
  /** A noncurrent object's bytes and the headers it is served with; the current object's live in the emulator. */
  body?: Buffer;
  headers?: Record<string, string>;
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** What one deletion did: a version removed (`versionId`), or a delete marker made or removed. */
export interface Deletion {
  key: string;
  versionId?: string;
  deleteMarker?: boolean;
  deleteMarkerVersionId?: string;
}

export const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const unescapeXml = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
const el = (name: string, value: string | number | boolean): string => `<${name}>${escapeXml(String(value))}</${name}>`;

export function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error>${el('Code', code)}${el('Message', message)}</Error>`;
}

export interface VersionPage {
  bucket: string;
  prefix: string;
  keyMarker: string;
  versionIdMarker: string;
  maxKeys: number;
  truncated: boolean;
  entries: Array<{ key: string; version: StoredVersion; isLatest: boolean }>;
}

export function listVersionsXml(page: VersionPage): string {
  const last = page.entries.at(-1);
  const next =
    page.truncated && last ? el('NextKeyMarker', last.key) + el('NextVersionIdMarker', last.version.versionId) : '';
  const entries = page.entries.map(({ key, version, isLatest }) => {
    const common =
      el('Key', key) +
      el('VersionId', version.versionId) +
      el('IsLatest', isLatest) +
      el('LastModified', version.lastModified.toISOString());
    if (version.deleteMarker) return `<DeleteMarker>${common}</DeleteMarker>`;
    return `<Version>${common}${el('ETag', version.etag ?? '')}${el('Size', version.size ?? 0)}${el('StorageClass', 'STANDARD')}</Version>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult xmlns="${NS}">`,
    el('Name', page.bucket),
    el('Prefix', page.prefix),
    el('KeyMarker', page.keyMarker),
    el('VersionIdMarker', page.versionIdMarker),
    next,
    el('MaxKeys', page.maxKeys),
    el('IsTruncated', page.truncated),
    ...entries,
    '</ListVersionsResult>',
  ].join('');
}

/** A DeleteObjects request body: each `<Object>`'s key and version id, and whether the answer is quiet. */
export function parseDeleteRequest(xml: string): {
  objects: Array<{ key: string; versionId?: string }>;
  quiet: boolean;
} {
  const objects = [...xml.matchAll(/<Object>([\s\S]*?)<\/Object>/g)].map(([, inner = '']) => {
    const key = unescapeXml(/<Key>([\s\S]*?)<\/Key>/.exec(inner)?.[1] ?? '');
    const versionId = /<VersionId>([\s\S]*?)<\/VersionId>/.exec(inner)?.[1];
    return versionId === undefined ? { key } : { key, versionId: unescapeXml(versionId) };
  });
  return { objects, quiet: /<Quiet>\s*true\s*<\/Quiet>/i.test(xml) };
}

export function deleteResultXml(results: readonly Deletion[]): string {
  const deleted = results.map(
    (r) =>
      `<Deleted>${el('Key', r.key)}${r.versionId !== undefined ? el('VersionId', r.versionId) : ''}${r.deleteMarker ? el('DeleteMarker', true) : ''}${r.deleteMarkerVersionId !== undefined ? el('DeleteMarkerVersionId', r.deleteMarkerVersionId) : ''}</Deleted>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="${NS}">${deleted.join('')}</DeleteResult>`;
}
