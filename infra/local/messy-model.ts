/**
 * The messy model (`npm start -- --messy-model RATE`, the bench's `messy` section, tests): the
 * offline stand-in's structured answers, a share of them written the way real models get them
 * wrong, so the parsers meet what Bedrock sends and not only the stand-in's clean JSON. Only a
 * local test hook: nothing in the cloud builds it.
 *
 * A structured answer (a request with an answer name, converse-protocol.ts answerNameOf) is
 * messed up at `rate`, in one of the ways its shape allows:
 * - prompt text (the answer's type in the system prompt, nothing constrains the decoding:
 *   "Without structured outputs, Claude can generate malformed JSON responses",
 *   https://platform.claude.com/docs/en/build-with-claude/structured-outputs): every kind;
 * - a forced tool (the input arrives as parsed JSON, the tool is not strict): an enum value in
 *   another case, an unknown extra field, an optional field left out, cut, empty;
 * - structured output (`outputConfig`, decoding constrained to the schema: "guarantee schema
 *   compliance", same page; "Eliminates error rates … from prompt-based approaches",
 *   https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html): only what the
 *   schema allows, an optional field left out, and the stops no schema prevents, cut or empty.
 * Summaries (free text) are left as they are.
 *
 * The draw is seeded and deterministic: it hashes the seed, the request and how many times
 * this very request was asked before, so a run replays the same messes whatever order
 * concurrent invocations call in, and a redelivered job or a budget retry draws afresh.
 */
import { createHash } from 'node:crypto';
import {
  answerNameOf,
  type ConverseReply,
  type ConverseRequest,
  cutReply,
  type Responder,
} from './converse-protocol.js';

export const MESS_KINDS = [
  'fenced',
  'prose-before',
  'prose-after',
  'trailing-comma',
  'enum-case',
  'extra-field',
  'missing-optional',
  'cut',
  'empty',
] as const;
export type MessKind = (typeof MESS_KINDS)[number];

/** The kinds each answer shape can really get wrong (see above). */
const KINDS_BY_SHAPE: Readonly<Record<'prompt' | 'tool' | 'schema', readonly MessKind[]>> = {
  prompt: MESS_KINDS,
  tool: ['enum-case', 'extra-field', 'missing-optional', 'cut', 'empty'],
  schema: ['missing-optional', 'cut', 'empty'],
};

/** Every kind at zero: the count of a run without the messy model. */
export const noMesses = (): Record<MessKind, number> =>
  Object.fromEntries(MESS_KINDS.map((k) => [k, 0])) as Record<MessKind, number>;

/** A field no answer schema of ours has: what a model adds unasked. */
export const EXTRA_FIELD = 'notes';

export interface MessyModel {
  responder: Responder;
  /** Answers messed up so far, by kind. */
  counts(): Record<MessKind, number>;
  /** Answers messed up so far. */
  total(): number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What a request's answer schema says: its enum values and its optional field names (from the JSON schema, or the prompt's type). */
export function vocabularyOf(request: ConverseRequest): { enums: Set<string>; optional: Set<string> } {
  const enums = new Set<string>();
  const optional = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n);
      return;
    }
    if (!isObject(node)) return;
    if (Array.isArray(node.enum)) for (const e of node.enum) if (typeof e === 'string') enums.add(e);
    if (isObject(node.properties)) {
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      for (const key of Object.keys(node.properties)) if (!required.has(key)) optional.add(key);
      for (const n of Object.values(node.properties)) walk(n);
    }
    if (node.items) walk(node.items);
  };
  const toolSchema = request.toolConfig?.tools?.[0]?.toolSpec?.inputSchema as { json?: unknown } | undefined;
  const outputSchema = request.outputConfig?.textFormat?.structure?.jsonSchema?.schema;
  if (toolSchema?.json) walk(toolSchema.json);
  else if (outputSchema) walk(JSON.parse(outputSchema));
  else {
    // The prompt's type (lib/model/prompted-answer.ts): `name?:` fields, `"a"|"b"` literals.
    const type = request.system?.at(-1)?.text ?? '';
    for (const m of type.matchAll(/([A-Za-z0-9_]+)\?:/g)) optional.add(m[1] as string);
    for (const m of type.matchAll(/"([^"]+)"(?=\||[,}\]])/g)) enums.add(m[1] as string);
  }
  return { enums, optional };
}

/** Every object in `value`, innermost first (the root last). */
function objectsOf(value: unknown, out: Json[] = []): Json[] {
  if (Array.isArray(value)) for (const v of value) objectsOf(v, out);
  else if (isObject(value)) {
    for (const v of Object.values(value)) objectsOf(v, out);
    out.push(value);
  }
  return out;
}

/** Another case of an enum value: lower case becomes Capitalised, anything else lower case. */
const recased = (v: string) => (v === v.toLowerCase() ? v.charAt(0).toUpperCase() + v.slice(1) : v.toLowerCase());

/** `answer` changed in place as `kind` says; false when the answer offers nothing to change that way. */
function messValue(
  answer: unknown,
  kind: 'enum-case' | 'extra-field' | 'missing-optional',
  vocabulary: ReturnType<typeof vocabularyOf>,
): boolean {
  const objects = objectsOf(answer);
  for (const o of objects) {
    for (const [k, v] of Object.entries(o)) {
      if (kind === 'enum-case' && typeof v === 'string' && vocabulary.enums.has(v) && recased(v) !== v) {
        o[k] = recased(v);
        return true;
      }
      if (kind === 'missing-optional' && vocabulary.optional.has(k)) {
        delete o[k];
        return true;
      }
    }
  }
  const target = objects[0];
  if (kind !== 'extra-field' || !target) return false;
  target[EXTRA_FIELD] = 'Based on the conversation above.';
  return true;
}

/** The JSON text of `value` written as `kind` says. */
function messText(
  value: unknown,
  kind: 'fenced' | 'prose-before' | 'prose-after' | 'trailing-comma' | 'other',
): string {
  const json = JSON.stringify(value, null, 2);
  if (kind === 'fenced') return `\`\`\`json\n${json}\n\`\`\``;
  if (kind === 'prose-before') return `Here is the JSON object you asked for:\n\n${json}`;
  if (kind === 'prose-after')
    return `${json}\n\nI based these on the turns above; let me know if anything should change.`;
  // The last member of the root object, and of its first non-empty list, followed by a comma.
  if (kind === 'trailing-comma') return json.replace(/\n}$/, ',\n}').replace(/(\S)(\n {2}\])/, '$1,$2');
  return JSON.stringify(value);
}

/** `reply` (a clean structured answer to `request`) messed up as `kind` says, or null when this answer cannot be. */
export function messUp(request: ConverseRequest, reply: ConverseReply, kind: MessKind): ConverseReply | null {
  if (!('body' in reply)) return null;
  if (kind === 'cut') return cutReply(request, reply);
  const message = (
    reply.body.output as { message?: { content?: Array<{ text?: string; toolUse?: { input?: unknown } }> } } | undefined
  )?.message;
  const block = message?.content?.[0];
  if (!message || !block) return null;
  if (kind === 'empty')
    return { body: { ...reply.body, output: { message: { role: 'assistant', content: [] } }, stopReason: 'end_turn' } };
  let value: unknown = block.toolUse?.input;
  if (value === undefined) {
    try {
      value = JSON.parse(block.text ?? '');
    } catch {
      return null;
    }
  }
  const copy = structuredClone(value);
  if (kind === 'enum-case' || kind === 'extra-field' || kind === 'missing-optional') {
    if (!messValue(copy, kind, vocabularyOf(request))) return null;
  }
  const content = block.toolUse
    ? [{ toolUse: { ...block.toolUse, input: copy } }]
    : [
        {
          text: messText(
            copy,
            kind === 'fenced' || kind === 'prose-before' || kind === 'prose-after' || kind === 'trailing-comma'
              ? kind
              : 'other',
          ),
        },
      ];
  return { body: { ...reply.body, output: { message: { ...message, content } } } };
}

/** A number in [0, 1) from `key`, and another for the kind. */
function draws(key: string): [number, number] {
  const digest = createHash('sha256').update(key).digest();
  return [digest.readUInt32BE(0) / 4_294_967_296, digest.readUInt32BE(4) / 4_294_967_296];
}

const shapeOf = (request: ConverseRequest): keyof typeof KINDS_BY_SHAPE =>
  request.toolConfig ? 'tool' : request.outputConfig ? 'schema' : 'prompt';

/** `base`'s structured answers, `rate` (0–1) of them messed up; `seed` picks which. */
export function messyModel(base: Responder, options: { rate: number; seed?: number }): MessyModel {
  const rate = Math.min(1, Math.max(0, options.rate));
  const seed = options.seed ?? 1;
  const asked = new Map<string, number>();
  const counts = new Map<MessKind, number>();
  const responder: Responder = async (request) => {
    const reply = await base(request);
    if (answerNameOf(request) === undefined) return reply;
    const key = JSON.stringify(request);
    const n = asked.get(key) ?? 0;
    asked.set(key, n + 1);
    const [hit, pick] = draws(`${seed}|${n}|${key}`);
    if (hit >= rate) return reply;
    // The drawn kind, or the next one this answer can take (an answer with no enum value cannot have it miscased).
    const kinds = KINDS_BY_SHAPE[shapeOf(request)];
    const first = Math.floor(pick * kinds.length);
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(first + i) % kinds.length] as MessKind;
      const messy = messUp(request, reply, kind);
      if (messy) {
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
        return messy;
      }
    }
    return reply;
  };
  return {
    responder,
    counts: () => ({ ...noMesses(), ...Object.fromEntries(counts) }),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
  };
}
