/**
 * A structured answer read the way real models write it: the use cases' parsers (the batch
 * reflection, the nightly and weekly runs) take the value this gives, not the raw answer, so an
 * answer that still carries a valid value is used rather than aborted. Pure.
 *
 * What models get wrong, and what is recovered here (req R-LLM; "Without structured outputs,
 * Claude can generate malformed JSON responses … Parsing errors from invalid JSON syntax,
 * Missing required fields, Inconsistent data types",
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs):
 * - text around the JSON (a code fence, a sentence before or after): the first balanced
 *   object is read (extractJsonObject);
 * - a trailing comma before `}` or `]`: dropped, outside strings;
 * - an enum value in another case (`facts` for `Facts`): folded to the schema's spelling;
 * - a field the schema does not have: dropped;
 * - an optional field left out: the zod parse after this gives its default.
 * An answer with none of that left (empty, cut, no object, a required field missing or of the
 * wrong type) still fails the zod parse, naming the field.
 */
import type * as z from 'zod';
import { modelSchemaOf } from './model-schema.js';
import { extractJsonObject } from './prompted-answer.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `json` without the commas that close no element (`[1,2,]`, `{"a":1,}`); strings and escapes respected. */
export function withoutTrailingCommas(json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i] as string;
    if (inString) {
      if (ch === '\\') {
        out += ch + (json[i + 1] ?? '');
        i++;
        continue;
      }
      if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === ',' && /^\s*[}\]]/.test(json.slice(i + 1, i + 200))) continue;
    out += ch;
  }
  return out;
}

/** The JSON object an answer's text holds (in prose or a code fence, trailing commas forgiven); undefined when it holds none. */
export function answerJsonOf(text: string): unknown {
  const json = extractJsonObject(text);
  if (json === null) return undefined;
  for (const candidate of [json, withoutTrailingCommas(json)]) {
    try {
      return JSON.parse(candidate);
    } catch {
      // the next candidate, or none
    }
  }
  return undefined;
}

/**
 * `value` in the shape of `schema` (a model-facing JSON schema, model-schema.ts) where it only
 * strays in spelling: enum values folded to the schema's case, fields the schema does not
 * name dropped. Walks the schema, not the value, so a value nested deeper than the schema is
 * not walked (a prompt injection can ask for thousands of levels). Anything else is left for
 * the zod parse to judge.
 */
export function conformToSchema(value: unknown, schema: unknown): unknown {
  if (!isObject(schema)) return value;
  if (Array.isArray(schema.enum) && typeof value === 'string') {
    const lower = value.toLowerCase();
    return schema.enum.find((e) => typeof e === 'string' && e.toLowerCase() === lower) ?? value;
  }
  if (Array.isArray(value)) return isObject(schema.items) ? value.map((v) => conformToSchema(v, schema.items)) : value;
  if (!isObject(value) || !isObject(schema.properties)) return value;
  const properties = schema.properties;
  return Object.fromEntries(
    Object.entries(value).flatMap(([k, v]) =>
      Object.hasOwn(properties, k) ? [[k, conformToSchema(v, properties[k])]] : [],
    ),
  );
}

/**
 * The value of a model's answer for `schema`'s parse: an already-parsed answer (a tool's input)
 * or the JSON its text holds, conformed to the model-facing schema. Undefined when a text holds
 * no JSON object.
 */
export function answerValueOf(raw: unknown, schema: z.ZodType): unknown {
  const value = typeof raw === 'string' ? answerJsonOf(raw) : raw;
  return value === undefined ? undefined : conformToSchema(value, modelSchemaOf(schema));
}
