/**
 * Structured output (Converse `outputConfig.textFormat`, a JSON schema the answer must follow)
 * instead of a forced tool: the JSON Schema subset it accepts, and our answer schemas cut to it.
 * Pure; the model adapter sends what this builds, the local Converse stand-in refuses what
 * Bedrock refuses with it.
 *
 * Sources:
 * - Converse takes the schema as a JSON string in `outputConfig.textFormat`
 *   (`{ type: 'json_schema', structure: { jsonSchema: { schema, name, description } } }`):
 *   https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html,
 *   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputConfig.html,
 *   API_runtime_OutputFormat.html (type: `json_schema`), API_runtime_JsonSchemaDefinition.html
 *   (`schema` required, a string). "Amazon Bedrock validates the JSON schema … If the schema
 *   contains unsupported features, Amazon Bedrock returns a 400 error immediately."
 * - The subset, shared by JSON outputs and strict tool use (Anthropic,
 *   https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations):
 *   `additionalProperties` "must be set to `false` for objects"; not supported: recursive
 *   schemas, external `$ref`, "Numerical constraints (such as `minimum`, `maximum`,
 *   `multipleOf`)", "String constraints (`minLength`, `maxLength`)", "Array constraints beyond
 *   `minItems` of 0 or 1"; at most 24 optional parameters and 16 with union types across a
 *   request's strict schemas ("Schema complexity limits"). "If you use an unsupported feature,
 *   you'll receive a 400 error with details."
 * - Which models: "On Amazon Bedrock, structured outputs are available for Claude Opus 4.6,
 *   Claude Sonnet 4.6, Claude Sonnet 4.5, Claude Opus 4.5, and Claude Haiku 4.5" (same page,
 *   Compatibility); the model table is lib/model/bedrock-models.ts (`structuredOutput`).
 */

const NUMERIC = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const STRING = ['minLength', 'maxLength'];
const ARRAY = ['maxItems', 'uniqueItems', 'minContains', 'maxContains'];
const UNSUPPORTED = new Set([...NUMERIC, ...STRING, ...ARRAY]);

/** Anthropic's explicit complexity limits ("Schema complexity limits"). */
export const MAX_OPTIONAL_PARAMETERS = 24;
export const MAX_UNION_PARAMETERS = 16;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `schema` (a model-facing answer schema, lib/model/model-schema.ts) in the subset above: the
 * keywords it refuses dropped (the zod parse after the answer still enforces them, and the
 * descriptions already state the ranges that carry meaning, e.g. "0..1"), a list's minimum
 * kept only as 0 or 1, and `additionalProperties: false` on every object.
 */
export function toStructuredOutputSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toStructuredOutputSchema);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (UNSUPPORTED.has(key)) continue;
    if (key === 'minItems') {
      if (typeof value === 'number' && value >= 1) out.minItems = 1;
      continue;
    }
    out[key] =
      key === 'properties' && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toStructuredOutputSchema(v)]))
        : toStructuredOutputSchema(value);
  }
  if (out.type === 'object') out.additionalProperties = false;
  return out;
}

/** Counts toward the complexity limits while walking a schema. */
interface Walk {
  optional: number;
  unions: number;
}

function nodeRefusal(node: Json, at: string, walk: Walk): string | null {
  for (const key of Object.keys(node)) {
    if (UNSUPPORTED.has(key)) return `${at}: For '${String(node.type)}' type, property '${key}' is not supported`;
  }
  if (typeof node.minItems === 'number' && node.minItems > 1)
    return `${at}: minItems values other than 0 or 1 are not supported`;
  if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) return `${at}: external $ref is not supported`;
  if (node.type === 'object' && node.additionalProperties !== false)
    return `${at}: for 'object' type, 'additionalProperties' must be explicitly set to false`;
  if (Array.isArray(node.anyOf) || Array.isArray(node.type)) walk.unions += 1;
  if (isObject(node.properties)) {
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    walk.optional += Object.keys(node.properties).filter((k) => !required.has(k)).length;
  }
  return null;
}

function walkRefusal(node: unknown, at: string, walk: Walk): string | null {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) {
      const r = walkRefusal(item, `${at}.${i}`, walk);
      if (r) return r;
    }
    return null;
  }
  if (!isObject(node)) return null;
  const own = nodeRefusal(node, at, walk);
  if (own) return own;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' || key === 'const' || key === 'default') continue;
    const children =
      key === 'properties' && isObject(value)
        ? Object.entries(value).map(([k, v]) => [`${at}.properties.${k}`, v] as const)
        : [[`${at}.${key}`, value] as const];
    for (const [where, child] of children) {
      const r = isObject(child) || Array.isArray(child) ? walkRefusal(child, where, walk) : null;
      if (r) return r;
    }
  }
  return null;
}

/** Why the subset above refuses `schema` (a parsed JSON schema), or null when it is accepted. */
export function structuredOutputSchemaRefusal(schema: unknown): string | null {
  if (!isObject(schema)) return 'schema: must be a JSON object';
  const walk: Walk = { optional: 0, unions: 0 };
  const refusal = walkRefusal(schema, 'schema', walk);
  if (refusal) return refusal;
  if (walk.optional > MAX_OPTIONAL_PARAMETERS)
    return `schema: ${walk.optional} optional parameters, more than the ${MAX_OPTIONAL_PARAMETERS} allowed`;
  if (walk.unions > MAX_UNION_PARAMETERS)
    return `schema: ${walk.unions} parameters with union types, more than the ${MAX_UNION_PARAMETERS} allowed`;
  return null;
}
