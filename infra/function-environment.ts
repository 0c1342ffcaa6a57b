/**
 * One environment contract per function: the zod schema in functions/<name>/env.ts is what
 * the handler reads (parseEnv at cold start), what the CDK stack must set (typed here, so a
 * missing or unknown variable does not compile; test/infra/stacks.test.ts also checks the
 * synthesized template against the schema) and what the local harness reads back from the
 * synthesized template.
 */
import type { z } from 'zod';

/** Variables the Node.js runtime and Powertools read themselves, beside each function's schema. */
export const RUNTIME_VARIABLES = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_LOG_LEVEL'] as const;

/** The variables of `schema`, each a string (CDK tokens included); optional ones may be left out. */
export type EnvironmentOf<S extends z.ZodObject> = { [K in keyof z.input<S>]: string };

/** A function's environment: its schema's variables plus Powertools' service name and log level. */
export function functionEnvironment<S extends z.ZodObject>(
  _schema: S,
  service: string,
  logLevel: string,
  variables: EnvironmentOf<S>,
): Record<string, string> {
  return { POWERTOOLS_SERVICE_NAME: service, POWERTOOLS_LOG_LEVEL: logLevel, ...(variables as Record<string, string>) };
}
