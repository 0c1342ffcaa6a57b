/**
 * The JSON Schema a model is shown for a structured answer, from the zod schema that
 * validates the answer. Every schema keyword is billed as input tokens on every call ("the
 * `tools` parameter in API requests (tool names, descriptions, and schemas)" counts as input,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview), while the limits
 * that only guard our storage (string lengths, list caps, zod's integer range, defaults) are
 * enforced by the zod parse after the answer arrives, and the hard caps by code. So the
 * model sees the shape: types, required fields, enums, a list's minimum, and numeric ranges
 * that carry meaning (0..1, -1..1, where the request's format keeps them); the rest stays in
 * the code. Descriptions are left out too: what a field is for, its form and its
 * scale are said once in the job's system prompt (REFLECTOR_SYSTEM_PROMPT, the nightly and
 * weekly prompts, an event batch's "Your reflection"), not again on every call's schema.
 */
import * as z from 'zod';

/** Keywords dropped everywhere: enforced after the answer, or said in the system prompt; not needed to write it. */
const STORAGE_LIMITS = new Set(['$schema', 'minLength', 'maxLength', 'maxItems', 'default', 'description']);

/** zod's bounds of `z.number().int()`: no meaning for the model. */
const isIntegerRangeLimit = (key: string, value: unknown) =>
  (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER);

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (STORAGE_LIMITS.has(key) || isIntegerRangeLimit(key, value)) continue;
    // `properties` maps field names to schemas: keep every name, strip each schema.
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, strip(v)]))
        : strip(value);
  }
  return out;
}

const built = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The model-facing JSON Schema of `schema`'s input (what the model writes): built on first
 * use and kept, since every model call sends it (not at module load: that is init time).
 * Callers must not change the object returned.
 */
export function modelSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let json = built.get(schema);
  if (!json) {
    json = strip(z.toJSONSchema(schema, { io: 'input' })) as Record<string, unknown>;
    built.set(schema, json);
  }
  return json;
}
