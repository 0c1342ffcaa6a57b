/** Fail-fast configuration: each setting is read once, at module scope, and must be set. */
export function getStringFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') throw new Error(`${name} environment variable is not set`);
  return value;
}

export function getNumberFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`${name} environment variable is not a number: ${value}`);
  return n;
}
