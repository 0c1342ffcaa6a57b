/** One request to the local harness's memory API, as a client sends it: a bearer token, a JSON body when there is one. */
export async function apiRequest(url: string, token: string, method: string, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected loosely
  return { status: res.status, body: (await res.json()) as any };
}
