/**
 * A versioned bucket on loopback: an HTTP front to the S3 emulator (fauxqs), which keeps no
 * versions. The deployed bucket is versioned (infra/stacks/stateful-stack.ts), so locally a
 * bucket whose versioning was switched on (PutBucketVersioning, as provision.ts does) behaves
 * as S3 documents it:
 *
 * - an overwrite keeps the object it replaces as a noncurrent version
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/AddingObjectstoVersioningEnabledBuckets.html);
 * - a DELETE without a version id removes nothing: a delete marker becomes the current
 *   version, and a GET without a version id then answers 404 with `x-amz-delete-marker: true`
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeleteMarker.html);
 * - a DELETE with a version id removes that version for good, and when it was the current one
 *   the previous version becomes current again
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeletingObjectVersions.html);
 * - GET/HEAD with a version id read that version; a delete marker's version id answers 405
 *   (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, "versionId");
 * - ListObjectVersions lists every version and delete marker, a key's newest first, in pages
 *   marked by key and version id (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html);
 * - DeleteObjects with version ids deletes those versions, reporting each
 *   (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
 *
 * The current version of each object stays in the emulator (so ListObjectsV2, GetObject,
 * conditional and ranged reads are the emulator's own); noncurrent versions' bytes are kept
 * here, in memory. Not emulated: the bucket's lifecycle rules (noncurrent versions expire
 * after 30 days in AWS), version-id-addressed CopyObject sources, delimiters in version
 * listings, and Suspended versioning. Addressing is path-style, as every local client uses.
 */
import { randomBytes } from 'node:crypto';
import {
  Agent,
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Deletion,
  deleteResultXml,
  errorXml,
  listVersionsXml,
  parseDeleteRequest,
  type StoredVersion,
} from './versioned-s3-xml.js';

export type { StoredVersion } from './versioned-s3-xml.js';

type Reply = { status: number; headers: Record<string, string>; body?: Buffer | string };
type Upstream = (
  method: string,
  path: string,
  headers?: Record<string, string | string[] | undefined>,
  body?: Buffer,
) => Promise<Reply>;

/** Headers a stored version is served and restored with. */
const KEPT_HEADERS =
  /^(content-type|content-encoding|content-disposition|content-language|cache-control|expires|x-amz-meta-.*)$/;

export class VersionedBuckets {
  private readonly versioned = new Set<string>();
  /** bucket → key → versions, newest first. */
  private readonly keys = new Map<string, Map<string, StoredVersion[]>>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private sequence = 0;

  constructor(private readonly upstream: Upstream) {}

  enable(bucket: string): void {
    this.versioned.add(bucket);
  }

  isVersioned(bucket: string): boolean {
    return this.versioned.has(bucket);
  }

  /** Every version and delete marker under `prefix` in key order, each key's newest first. */
  versions(bucket: string, prefix: string): Array<{ key: string; version: StoredVersion; isLatest: boolean }> {
    const byKey = this.keys.get(bucket) ?? new Map<string, StoredVersion[]>();
    return [...byKey.keys()]
      .filter((k) => k.startsWith(prefix))
      .sort()
      .flatMap((key) => (byKey.get(key) ?? []).map((version, i) => ({ key, version, isLatest: i === 0 })));
  }

  find(bucket: string, key: string, versionId: string): { version: StoredVersion; current: boolean } | undefined {
    const history = this.history(bucket, key);
    const i = history.findIndex((v) => v.versionId === versionId);
    return i < 0 ? undefined : { version: history[i] as StoredVersion, current: i === 0 };
  }

  latest(bucket: string, key: string): StoredVersion | undefined {
    return this.history(bucket, key)[0];
  }

  /**
   * A write of the key's new current object (`send` forwards it; `size` its length when the
   * request says it): the object it replaces becomes noncurrent.
   */
  write(bucket: string, key: string, send: () => Promise<Reply>, size?: number): Promise<Reply> {
    return this.locked(bucket, key, async () => {
      const history = this.history(bucket, key);
      const previous = history[0];
      if (previous && !previous.deleteMarker) await this.keepBytes(bucket, key, previous);
      const reply = await send();
      if (reply.status >= 300) {
        if (previous) delete previous.body;
        return reply;
      }
      const head =
        size === undefined || reply.headers.etag === undefined
          ? (await this.upstream('HEAD', objectPath(bucket, key))).headers
          : undefined;
      const etag = head?.etag ?? reply.headers.etag;
      const version: StoredVersion = {
        versionId: this.newVersionId(),
        deleteMarker: false,
        lastModified: new Date(),
        etag,
        size: size ?? Number(head?.['content-length'] ?? 0),
      };
      history.unshift(version);
      return { ...reply, headers: { ...reply.headers, 'x-amz-version-id': version.versionId } };
    });
  }

  /** A DELETE of a key: without a version id a delete marker, with one that version removed for good. */
  delete(bucket: string, key: string, versionId: string | undefined): Promise<Deletion> {
    return this.locked(bucket, key, async () => {
      const history = this.history(bucket, key);
      if (versionId === undefined) {
        const current = history[0];
        if (current && !current.deleteMarker) {
          await this.keepBytes(bucket, key, current);
          await this.upstream('DELETE', objectPath(bucket, key));
        }
        const marker: StoredVersion = { versionId: this.newVersionId(), deleteMarker: true, lastModified: new Date() };
        history.unshift(marker);
        return { key, deleteMarker: true, deleteMarkerVersionId: marker.versionId };
      }
      const i = history.findIndex((v) => v.versionId === versionId);
      if (i < 0) return { key, versionId };
      const [gone] = history.splice(i, 1) as [StoredVersion];
      if (i === 0) await this.makeCurrent(bucket, key, gone, history[0]);
      return { key, versionId, ...(gone.deleteMarker ? { deleteMarker: true, deleteMarkerVersionId: versionId } : {}) };
    });
  }

  /** After the current version `gone` was removed: the emulator drops it and holds `next`'s bytes, if `next` is an object. */
  private async makeCurrent(
    bucket: string,
    key: string,
    gone: StoredVersion,
    next: StoredVersion | undefined,
  ): Promise<void> {
    if (!gone.deleteMarker) await this.upstream('DELETE', objectPath(bucket, key));
    if (!next || next.deleteMarker) return;
    await this.upstream('PUT', objectPath(bucket, key), next.headers ?? {}, next.body ?? Buffer.alloc(0));
    delete next.body;
    delete next.headers;
  }

  /** The current object's bytes and headers, read from the emulator before it is replaced or deleted. */
  private async keepBytes(bucket: string, key: string, version: StoredVersion): Promise<void> {
    const res = await this.upstream('GET', objectPath(bucket, key));
    if (res.status !== 200) return;
    version.body = Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.body ?? '');
    version.headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => KEPT_HEADERS.test(k)));
  }

  private history(bucket: string, key: string): StoredVersion[] {
    const byKey = this.keys.get(bucket) ?? new Map<string, StoredVersion[]>();
    this.keys.set(bucket, byKey);
    const history = byKey.get(key) ?? [];
    byKey.set(key, history);
    return history;
  }

  /** One change of a key at a time, as S3 orders the writes to a key. */
  private locked<T>(bucket: string, key: string, run: () => Promise<T>): Promise<T> {
    const id = `${bucket}/${key}`;
    const result = (this.locks.get(id) ?? Promise.resolve()).then(run, run);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return result;
  }

  /** Opaque, unique ids, sortable by when the version was made (S3 promises only uniqueness). */
  private newVersionId(): string {
    this.sequence += 1;
    return `${this.sequence.toString(36).padStart(8, '0')}${randomBytes(12).toString('base64url')}`;
  }
}

const objectPath = (bucket: string, key: string): string =>
  `/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

export interface VersionedS3 {
  url: string;
  buckets: VersionedBuckets;
  close(): Promise<void>;
}

/** The versioned front on a free loopback port, forwarding to the emulator at `upstreamUrl`. */
export async function startVersionedS3(upstreamUrl: string): Promise<VersionedS3> {
  const agent = new Agent({ keepAlive: true });
  const upstream = forwarder(new URL(upstreamUrl), agent);
  const buckets = new VersionedBuckets(upstream);
  const server: Server = createServer((req, res) => {
    handle(req, buckets, upstream)
      .then((reply) => send(res, reply))
      .catch((error: unknown) =>
        send(res, {
          status: 500,
          headers: { 'content-type': 'application/xml' },
          body: errorXml('InternalError', (error as Error).message),
        }),
      );
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    buckets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, buckets: VersionedBuckets, upstream: Upstream): Promise<Reply> {
  const body = await readBody(req);
  const url = new URL(req.url ?? '/', 'http://local');
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const method = req.method ?? 'GET';
  const q = url.searchParams;
  const forward = () => upstream(method, req.url ?? '/', req.headers, body);
  if (bucket !== '' && key === '' && q.has('versioning')) return versioningConfig(method, bucket, body, buckets);
  if (bucket === '' || !buckets.isVersioned(bucket)) return forward();
  if (key === '') {
    if (method === 'GET' && q.has('versions')) return listVersions(bucket, q, buckets);
    if (method === 'POST' && q.has('delete')) return deleteMany(bucket, body, buckets);
    return forward();
  }
  const versionId = q.get('versionId') ?? undefined;
  if (method === 'PUT' && !q.has('uploadId')) return buckets.write(bucket, key, forward, bodySize(req, body));
  if (method === 'POST' && q.has('uploadId')) return buckets.write(bucket, key, forward);
  if (method === 'DELETE' && !q.has('uploadId')) return deleteOne(bucket, key, versionId, buckets);
  if (method === 'GET' || method === 'HEAD') return read(method, bucket, key, versionId, req, buckets, upstream);
  return forward();
}

/** The object's length a PUT says: its decoded length when the body is aws-chunked, else the body's; a copy's is read after. */
function bodySize(req: IncomingMessage, body: Buffer): number | undefined {
  if (req.headers['x-amz-copy-source'] !== undefined) return undefined;
  const decoded = req.headers['x-amz-decoded-content-length'];
  return typeof decoded === 'string' ? Number(decoded) : body.length;
}

function versioningConfig(method: string, bucket: string, body: Buffer, buckets: VersionedBuckets): Reply {
  if (method === 'PUT') {
    if (!/<Status>\s*Enabled\s*<\/Status>/.test(body.toString('utf8')))
      return xmlReply(501, errorXml('NotImplemented', 'only Enabled versioning is emulated locally'));
    buckets.enable(bucket);
    return { status: 200, headers: {} };
  }
  const status = buckets.isVersioned(bucket) ? '<Status>Enabled</Status>' : '';
  return xmlReply(
    200,
    `<?xml version="1.0" encoding="UTF-8"?><VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${status}</VersioningConfiguration>`,
  );
}

function listVersions(bucket: string, q: URLSearchParams, buckets: VersionedBuckets): Reply {
  const prefix = q.get('prefix') ?? '';
  const keyMarker = q.get('key-marker') ?? '';
  const versionIdMarker = q.get('version-id-marker') ?? '';
  const maxKeys = Math.min(Math.max(Number(q.get('max-keys') ?? 1000) || 1000, 1), 1000);
  const all = buckets.versions(bucket, prefix);
  let start = 0;
  if (keyMarker !== '') {
    const marked =
      versionIdMarker === ''
        ? -1
        : all.findIndex((e) => e.key === keyMarker && e.version.versionId === versionIdMarker);
    start = marked >= 0 ? marked + 1 : all.findIndex((e) => e.key > keyMarker);
    if (start < 0) start = all.length;
  }
  const page = all.slice(start, start + maxKeys);
  const truncated = start + maxKeys < all.length;
  return xmlReply(
    200,
    listVersionsXml({ bucket, prefix, keyMarker, versionIdMarker, maxKeys, truncated, entries: page }),
  );
}

async function deleteOne(
  bucket: string,
  key: string,
  versionId: string | undefined,
  buckets: VersionedBuckets,
): Promise<Reply> {
  const done = await buckets.delete(bucket, key, versionId);
  const headers: Record<string, string> = {};
  const id = done.deleteMarkerVersionId ?? done.versionId;
  if (id !== undefined) headers['x-amz-version-id'] = id;
  if (done.deleteMarker) headers['x-amz-delete-marker'] = 'true';
  return { status: 204, headers };
}

async function deleteMany(bucket: string, body: Buffer, buckets: VersionedBuckets): Promise<Reply> {
  const { objects, quiet } = parseDeleteRequest(body.toString('utf8'));
  const results = await Promise.all(objects.map((o) => buckets.delete(bucket, o.key, o.versionId)));
  return xmlReply(200, deleteResultXml(quiet ? [] : results));
}

async function read(
  method: string,
  bucket: string,
  key: string,
  versionId: string | undefined,
  req: IncomingMessage,
  buckets: VersionedBuckets,
  upstream: Upstream,
): Promise<Reply> {
  const withoutVersion = () => {
    const url = new URL(req.url ?? '/', 'http://local');
    url.searchParams.delete('versionId');
    return upstream(method, `${url.pathname}${url.search}`, req.headers);
  };
  if (versionId === undefined) {
    const reply = await withoutVersion();
    const latest = buckets.latest(bucket, key);
    if (reply.status === 404 && latest?.deleteMarker)
      return { ...reply, headers: { ...reply.headers, 'x-amz-delete-marker': 'true' } };
    if (reply.status < 300 && latest && !latest.deleteMarker)
      return { ...reply, headers: { ...reply.headers, 'x-amz-version-id': latest.versionId } };
    return reply;
  }
  const found = buckets.find(bucket, key, versionId);
  const noBody = (r: Reply): Reply => (method === 'HEAD' ? { ...r, body: undefined } : r);
  if (!found) return noBody(xmlReply(404, errorXml('NoSuchVersion', 'The specified version does not exist.')));
  const { version, current } = found;
  const stamp = { 'x-amz-version-id': version.versionId, 'last-modified': version.lastModified.toUTCString() };
  if (version.deleteMarker)
    return noBody({
      ...xmlReply(405, errorXml('MethodNotAllowed', 'The specified method is not allowed against this resource.')),
      headers: { 'content-type': 'application/xml', ...stamp, 'x-amz-delete-marker': 'true' },
    });
  if (current) {
    const reply = await withoutVersion();
    return { ...reply, headers: { ...reply.headers, 'x-amz-version-id': version.versionId } };
  }
  const bytes = version.body ?? Buffer.alloc(0);
  const headers = {
    ...(version.headers ?? {}),
    ...stamp,
    etag: version.etag ?? '',
    'content-length': String(bytes.length),
  };
  return { status: 200, headers, body: method === 'HEAD' ? undefined : bytes };
}

function xmlReply(status: number, xml: string): Reply {
  return { status, headers: { 'content-type': 'application/xml' }, body: xml };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: Reply): void {
  const headers = { ...reply.headers };
  delete headers['transfer-encoding'];
  delete headers.connection;
  if (reply.body === undefined) {
    if (!('content-length' in headers)) headers['content-length'] = '0';
    res.writeHead(reply.status, headers).end();
    return;
  }
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  res.writeHead(reply.status, { ...headers, 'content-length': String(body.length) }).end(body);
}

/** Sends a request to the emulator and reads its whole answer. */
function forwarder(base: URL, agent: Agent): Upstream {
  return (method, path, headers = {}, body) =>
    new Promise<Reply>((resolve, reject) => {
      const outgoing: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(headers))
        if (v !== undefined && !['host', 'connection', 'transfer-encoding'].includes(k)) outgoing[k] = v;
      if (body !== undefined) outgoing['content-length'] = String(body.length);
      const req = httpRequest(
        { agent, host: base.hostname, port: base.port, method, path, headers: { ...outgoing, host: base.host } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const replyHeaders: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers))
              if (v !== undefined) replyHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve({
              status: res.statusCode ?? 500,
              headers: replyHeaders,
              body: method === 'HEAD' ? undefined : Buffer.concat(chunks),
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
