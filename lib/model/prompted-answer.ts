/**
 * A structured answer asked for in the prompt: no structured output schema and no
 * forced tool, but a line of the system prompt giving the answer's type, rendered from the
 * same model-facing JSON schema (lib/model/model-schema.ts, itself from the zod schema that
 * parses the answer: one source of truth) as a one-line TypeScript-like type, and the answer's
 * text read as JSON. Pure.
 *
 * Why: a JSON schema is billed as input on every call, and structured output adds a system
 * prompt "explaining the expected output format … The injected prompt costs you tokens like any
 * other system prompt" (https://platform.claude.com/docs/en/build-with-claude/structured-outputs);
 * a forced tool adds Claude's hidden tool-use prompt (588 tokens for a 4.5 model,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview). The type below says
 * the same shape in about a quarter of the schema's characters, with no hidden prompt.
 *
 * What it costs: nothing constrains the decoding. "Without structured outputs, Claude can
 * generate malformed JSON responses … Even with careful prompting, you may encounter: Parsing
 * errors from invalid JSON syntax, Missing required fields, Inconsistent data types" (same
 * page), and AWS: structured output "Eliminates error rates and retry loops from prompt-based
 * approaches" (https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html).
 * Anthropic's advice for consistent output without it is what this does: "Precisely define
 * your desired output format using JSON, XML, or custom templates"
 * (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/increase-consistency).
 * The use cases' zod parse already rejects a bad answer naming the field and keeps the raw
 * text, and an unusable answer is asked again on the job's next delivery (req R-ERR-2).
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The first line of the instruction: the local Converse stand-in recognises a prompted answer by it. */
export const PROMPTED_ANSWER_LEAD = 'Answer with only a JSON object of this TypeScript type:';

const SCALARS: Readonly<Record<string, string>> = {
  string: 'string',
  integer: 'int',
  number: 'number',
  boolean: 'boolean',
  null: 'null',
};

function objectType(node: Json): string {
  const properties = isObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const fields = Object.entries(properties).map(
    ([name, schema]) => `${name}${required.has(name) ? '' : '?'}:${typeOf(schema)}`,
  );
  return `{${fields.join(',')}}`;
}

function arrayType(node: Json): string {
  const item = typeOf(node.items);
  // A list the schema wants non-empty (`minItems` 1, e.g. the turns an item cites) says so: an empty one would fail the parse.
  if (typeof node.minItems === 'number' && node.minItems >= 1) return `[${item},...${item}[]]`;
  return isUnion(item) ? `(${item})[]` : `${item}[]`;
}

/** Whether a rendered type is a union at its top level (`"a"|"b"`, not `{k:"a"|"b"}`): a list of it needs parentheses. */
function isUnion(type: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < type.length; i++) {
    const ch = type[i] as string;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if ('{[('.includes(ch)) depth++;
    else if ('}])'.includes(ch)) depth--;
    else if (ch === '|' && depth === 0) return true;
  }
  return false;
}

/** A JSON schema node as a TypeScript-like type: objects, lists, enums, unions and scalars; other keywords are not rendered. */
export function typeOf(node: unknown): string {
  if (!isObject(node)) return 'any';
  if (Array.isArray(node.enum)) return node.enum.map((v) => JSON.stringify(v)).join('|');
  if ('const' in node) return JSON.stringify(node.const);
  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (union) return union.map(typeOf).join('|');
  if (Array.isArray(node.type)) return node.type.map((t) => typeOf({ ...node, type: t })).join('|');
  if (node.type === 'object') return objectType(node);
  if (node.type === 'array') return arrayType(node);
  return SCALARS[String(node.type)] ?? 'any';
}

/** The system prompt's last block when the answer's shape is asked for in the prompt: the lead line, then `type <name> = <type>`. */
export function promptedAnswerInstruction(name: string, schema: unknown): string {
  return `${PROMPTED_ANSWER_LEAD}\ntype ${name} = ${typeOf(schema)}`;
}

/** The answer's name an instruction of promptedAnswerInstruction gives, or undefined for any other text. */
export function promptedAnswerNameOf(text: string): string | undefined {
  if (!text.startsWith(PROMPTED_ANSWER_LEAD)) return undefined;
  return /^type ([A-Za-z0-9_-]+) = /m.exec(text.slice(PROMPTED_ANSWER_LEAD.length))?.[1];
}

/** The first balanced `{…}` in `text` (strings and escapes respected): the JSON object of an answer wrapped in prose or a code fence; null when there is none. */
export function extractJsonObject(text: string): string | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}
