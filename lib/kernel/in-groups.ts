/** `each` over the values, `size` at a time, in order: a bound on the requests one invocation has in flight. */
export async function inGroups<T, R>(values: readonly T[], size: number, each: (value: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < values.length; i += size) out.push(...(await Promise.all(values.slice(i, i + size).map(each))));
  return out;
}
