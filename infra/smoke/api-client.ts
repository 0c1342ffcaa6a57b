/**
 * The few memory API calls the smoke test makes, as any client outside the stack makes them:
 * HTTPS (or the local stand-in), a bearer token, JSON. Answers are returned, never thrown,
 * so a check can say what the API answered.
 */

export interface ApiAnswer {
  status: number;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: unknown;
}

export interface UserApi {
  get(path: string): Promise<ApiAnswer>;
  post(path: string, body: unknown): Promise<ApiAnswer>;
}

/** API Gateway cuts an integration off at 30 s; wait a little longer than that. */
const REQUEST_TIMEOUT_MS = 35_000;

/** Calls `{apiUrl}/v1/users/{userId}{path}` with the token. */
export function userApi(apiUrl: string, userId: string, token: string): UserApi {
  const base = `${apiUrl.replace(/\/+$/, '')}/v1/users/${encodeURIComponent(userId)}`;
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<ApiAnswer> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the message
    }
    return { status: res.status, body: parsed };
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

/** One line for a failed answer: the status and the API's own message (`{"error":{"message"}}` or API Gateway's `{"message"}`). */
export function describeAnswer(answer: ApiAnswer): string {
  const b = answer.body as { error?: { message?: unknown }; message?: unknown } | string | null;
  const message = typeof b === 'string' ? b.slice(0, 200) : String(b?.error?.message ?? b?.message ?? '');
  const hint =
    answer.status === 401
      ? ' (the JWT authorizer refused the token: issuer, audience or expiry)'
      : answer.status === 403
        ? ' (the token may not act on this user)'
        : '';
  return `HTTP ${answer.status}${message ? `: ${message}` : ''}${hint}`;
}
