/**
 * A typed client of the memory API: every route of contract.ts by its
 * operation id, its path parameters, query and body typed from the route's own zod schemas and
 * its answer typed as the route's response; and the calls an agent makes most, by name. What
 * an agent developer imports, with the turn publisher (lib/turns/sqs-turn-publisher.adapter.ts).
 *
 *   const memory = new MemoryClient(apiUrl, () => token);
 *   const { results } = await memory.search('user-42', { query: 'the tank size', limit: 5 });
 *
 * A refused or failed call throws MemoryClientError with the status and the fields the API
 * named (`body.query`…).
 */
import type * as z from 'zod';
import { routes } from './contract.js';

type Routes = (typeof routes)[number];
export type Operation = Routes['operationId'];
type RouteOf<O extends Operation> = Extract<Routes, { operationId: O }>;
type Input<R, K extends string> = R extends Record<K, z.ZodType> ? z.input<R[K]> : undefined;

/** What an operation takes: its path parameters, query and body, each as its schema reads it. */
export type OperationInput<O extends Operation> = {
  params: Input<RouteOf<O>, 'params'>;
  query?: Input<RouteOf<O>, 'query'>;
  body?: Input<RouteOf<O>, 'body'>;
};
/** What an operation answers. */
export type OperationOutput<O extends Operation> = z.output<RouteOf<O>['response']>;

export class MemoryClientError extends Error {
  override readonly name = 'MemoryClientError';
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Array<{ path: string; message: string }> = [],
  ) {
    super(`${status}: ${message}`);
  }
}

export class MemoryClient {
  /**
   * @param apiUrl the stage's API URL (the `ApiUrl` output; locally `.local/stack.json`'s `apiUrl`)
   * @param token a bearer token for the users it acts on (asked for each call, so it can be refreshed)
   */
  constructor(
    private readonly apiUrl: string,
    private readonly token: () => string | Promise<string>,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** Any route, by operation id. */
  async call<O extends Operation>(operation: O, input: OperationInput<O>): Promise<OperationOutput<O>> {
    const route = routes.find((r) => r.operationId === operation) as Routes;
    const params = (input.params ?? {}) as Record<string, string>;
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')));
    const query = input.query
      ? `?${new URLSearchParams(Object.entries(input.query as Record<string, unknown>).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])))}`
      : '';
    const res = await this.fetchImpl(`${this.apiUrl.replace(/\/$/, '')}${path}${query}`, {
      method: route.method,
      headers: {
        authorization: `Bearer ${await this.token()}`,
        ...(input.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(input.body !== undefined ? { body: JSON.stringify(input.body) } : {}),
    });
    const text = await res.text();
    const answer = text === '' ? undefined : (JSON.parse(text) as unknown);
    if (!res.ok) {
      const error = (
        answer as { error?: { message?: string; fields?: Array<{ path: string; message: string }> } } | undefined
      )?.error;
      throw new MemoryClientError(res.status, error?.message ?? res.statusText, error?.fields);
    }
    return answer as OperationOutput<O>;
  }

  search(userId: string, request: Input<RouteOf<'memorySearch'>, 'body'>) {
    return this.call('memorySearch', { params: { userId }, body: request });
  }

  save(userId: string, request: Input<RouteOf<'memorySave'>, 'body'>) {
    return this.call('memorySave', { params: { userId }, body: request });
  }

  retrieve(userId: string, request: Input<RouteOf<'memoryRetrieve'>, 'body'>) {
    return this.call('memoryRetrieve', { params: { userId }, body: request });
  }

  /** Correct the text of a Knowledge fact or finding (`knowledge:<path>`) or a summary (`summary:<id>`); the old text stays in the audit trail. */
  editItem(userId: string, id: string, request: Input<RouteOf<'itemEdit'>, 'body'>) {
    return this.call('itemEdit', { params: { userId, id }, body: request });
  }

  /** Bring back the text the edit whose audit entry has time `at` replaced. */
  restoreItem(userId: string, id: string, request: Input<RouteOf<'itemRestore'>, 'body'>) {
    return this.call('itemRestore', { params: { userId, id }, body: request });
  }

  /** The tiers: create an entry, query one, delete (soft) an entry. */
  readonly tiers = {
    create: (
      userId: string,
      tier: Input<RouteOf<'tierCreate'>, 'params'>['tier'],
      entry: Input<RouteOf<'tierCreate'>, 'body'>,
    ) => this.call('tierCreate', { params: { userId, tier }, body: entry }),
    query: (
      userId: string,
      tier: Input<RouteOf<'tierQuery'>, 'params'>['tier'],
      query: Input<RouteOf<'tierQuery'>, 'query'> = {},
    ) => this.call('tierQuery', { params: { userId, tier }, query }),
    delete: (userId: string, tier: Input<RouteOf<'tierDelete'>, 'params'>['tier'], id: string) =>
      this.call('tierDelete', { params: { userId, tier, id } }),
  };

  /** Delete any item memory.search returns, by id (req R-DEL-1); `reason` goes into the audit trail. */
  deleteItem(userId: string, id: string, reason?: string) {
    return this.call('itemDelete', { params: { userId, id }, query: reason === undefined ? {} : { reason } });
  }

  /**
   * Without a request: forget the user (DELETE /v1/users/{u}), answering the receipt, pending until the
   * erasure has run (`forgetReceipt` shows it done, with what was erased per store). With one:
   * forget by provenance (req R-DEL-3) — those turns, or a session's, and every item derived
   * from them — answering the receipt of ids removed by kind (`dryRun: true` changes nothing).
   */
  forget(userId: string): Promise<OperationOutput<'userForget'>>;
  forget(userId: string, request: Input<RouteOf<'memoryForget'>, 'body'>): Promise<OperationOutput<'memoryForget'>>;
  forget(userId: string, request?: Input<RouteOf<'memoryForget'>, 'body'>) {
    return request === undefined
      ? this.call('userForget', { params: { userId } })
      : this.call('memoryForget', { params: { userId }, body: request });
  }

  forgetReceipt(userId: string) {
    return this.call('userForgetReceipt', { params: { userId } });
  }

  /** Everything the user has, as one archive; `import` restores it (in this stage or another) into a user with no memory yet. */
  export(userId: string) {
    return this.call('userExport', { params: { userId } });
  }

  import(userId: string, archive: Input<RouteOf<'userImport'>, 'body'>['archive']) {
    return this.call('userImport', { params: { userId }, body: { archive } });
  }

  /** Review of staged items: list, promote, discard. */
  readonly review = {
    staged: (userId: string, query: Input<RouteOf<'reviewList'>, 'query'> = {}) =>
      this.call('reviewList', { params: { userId }, query }),
    promote: (userId: string, request: Input<RouteOf<'reviewPromote'>, 'body'>) =>
      this.call('reviewPromote', { params: { userId }, body: request }),
    discard: (userId: string, request: Input<RouteOf<'reviewDiscard'>, 'body'>) =>
      this.call('reviewDiscard', { params: { userId }, body: request }),
  };
}
