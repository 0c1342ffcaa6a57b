/**
 * Fail-fast configuration: each function's environment is one zod schema
 * (`functions/<name>/env.ts`), read once at cold start. The CDK stack sets exactly those
 * variables (checked by test/infra/stacks.test.ts) and the local harness reads the same
 * values from the synthesized template, so the three cannot drift apart.
 */
import type { z } from 'zod';

/** An environment variable that is missing or malformed: names every failing variable. */
export class EnvironmentError extends Error {
  override readonly name = 'EnvironmentError';
}

export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const res = schema.safeParse(env);
  if (res.success) return res.data;
  const fields = res.error.issues.map((i) => `${i.path.join('.') || '(environment)'}: ${i.message}`);
  throw new EnvironmentError(`environment variables not set or invalid: ${fields.join('; ')}`);
}
