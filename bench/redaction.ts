/**
 * Redaction: a few hundred made-up secrets and personal identifiers, in
 * their issuers' formats, planted in a LoCoMo conversation's turns and replayed through the
 * local harness with the prod stage's policy (personal data on). Counted afterwards: how many
 * planted values reach DynamoDB (any item), S3 (the user's objects, claims, kept rejects) or a
 * model prompt — the goal is 0 — and, on every dev conversation as it is (nothing planted),
 * how many spans the redaction takes that were ordinary text.
 *
 *   tsx bench/redaction.ts [--plants 300] [--conversation conv-30.json]
 *
 * Its last stdout line is the result as JSON.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { composeIBAN } from 'ibantools';
import { replayLinesFromFile } from '../infra/local/locomo.js';
import { getText, listAllKeys } from '../lib/kernel/s3-objects.adapter.js';
import { claimsPrefix, keys, rejectedPrefix, userPrefix } from '../lib/kernel/memory-paths.js';
import { startHarness } from '../infra/local/harness.js';
import { rng } from './load.js';
import { addCounts, luhn, type RedactionCounts, type RedactionKind, redact } from '../lib/turns/redaction.js';
import { printReport } from './print-report.js';

export interface RedactionReport {
  conversation: string;
  turns: number;
  planted: number;
  plantedByKind: Partial<Record<RedactionKind, number>>;
  /** Planted values found afterwards, per store (goal: 0 each). */
  reached: { dynamodb: number; s3: number; prompts: number };
  /** The kinds of the planted values that reached any store. */
  reachedKinds: string[];
  /** Controls: plants the same check finds in the published lines (must be all), model calls made, redaction markers in the user's turn items. */
  control: { foundInInput: number; modelCalls: number; markersInTurns: number };
  /** What the signal function's redaction would take from the dev conversations as they are. */
  falsePositives: {
    conversations: number;
    turns: number;
    words: number;
    total: number;
    byKind: RedactionCounts;
    examples: string[];
  };
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALNUM = `${UPPER}abcdefghijklmnopqrstuvwxyz0123456789`;

function plantFactory(random: () => number) {
  const pick = (chars: string, n: number) =>
    Array.from({ length: n }, () => chars[Math.floor(random() * chars.length)]).join('');
  const digits = (n: number) => pick('0123456789', n);
  const b64url = (s: string) => Buffer.from(s).toString('base64url');
  const luhnCard = () => {
    const body = `4${digits(14)}`;
    const check = [...'0123456789'].find((c) => luhn(`${body}${c}`));
    return `${body}${check}`.replace(/(\d{4})(?=\d)/g, '$1 ');
  };
  /** Each kind: the sentence planted and the part of it that must not survive. */
  const makers: Record<RedactionKind, () => { sentence: string; secret: string }> = {
    aws_access_key: () => {
      const v = `AKIA${pick(`${UPPER}234567`, 16)}`;
      return { sentence: `my access key id is ${v} if you need it`, secret: v };
    },
    aws_secret_key: () => {
      const v = pick(`${ALNUM}/+`, 40);
      return { sentence: `the config says aws_secret_access_key=${v}`, secret: v };
    },
    private_key: () => {
      const line = pick(`${ALNUM}+/`, 64);
      return {
        sentence: `here is the key file:\n-----BEGIN PRIVATE KEY-----\n${line}\n${pick(`${ALNUM}+/`, 40)}\n-----END PRIVATE KEY-----\n`,
        secret: line,
      };
    },
    jwt: () => {
      const payload = b64url(JSON.stringify({ sub: pick(ALNUM, 12), exp: 1_800_000_000 + Math.floor(random() * 1e6) }));
      return {
        sentence: `the session token was ${b64url('{"alg":"HS256","typ":"JWT"}')}.${payload}.${pick(`${ALNUM}-_`, 43)}`,
        secret: payload,
      };
    },
    api_token: () => {
      const forms = [
        `ghp_${pick(ALNUM, 36)}`,
        `xoxb-${digits(12)}-${pick(ALNUM, 24)}`,
        `sk_live_${pick(ALNUM, 24)}`,
        `AIza${pick(`${ALNUM}-_`, 35)}`,
        `sk-ant-${pick(`${ALNUM}-_`, 40)}`,
      ];
      const v = forms[Math.floor(random() * forms.length)] as string;
      return { sentence: `I pasted the token ${v} into the settings`, secret: v };
    },
    url_password: () => {
      const pw = pick(ALNUM, 14);
      return { sentence: `the dashboard is at https://ops:${pw}@dash.example.net/home`, secret: pw };
    },
    connection_secret: () => {
      const pw = pick(ALNUM, 12);
      return { sentence: `connection string Server=db1;Database=shop;User Id=app;Password=${pw};`, secret: pw };
    },
    email: () => {
      const v = `${pick('abcdefghijklmnopqrstuvwxyz', 7)}.${pick('abcdefghijklmnopqrstuvwxyz', 5)}@mail${digits(2)}.example.com`;
      return { sentence: `you can write to me at ${v} anytime`, secret: v };
    },
    phone: () => {
      const v = random() < 0.5 ? `+44 20 ${digits(4)} ${digits(4)}` : `(${digits(3)}) ${digits(3)}-${digits(4)}`;
      return { sentence: `my number is ${v}, call after six`, secret: v };
    },
    card_number: () => {
      const v = luhnCard();
      return { sentence: `I paid with the card ${v} last time`, secret: v };
    },
    iban: () => {
      const v = composeIBAN({ countryCode: 'DE', bban: digits(18) }) ?? '';
      return { sentence: `send it to my account ${v} please`, secret: v };
    },
  };
  return makers;
}

/** Plant `count` values, one kind after another, into turns chosen at random; the plants and the lines. */
export function plant(
  lines: readonly string[],
  count: number,
  seed = 7,
): { lines: string[]; plants: Array<{ kind: RedactionKind; secret: string }> } {
  const random = rng(seed);
  const makers = plantFactory(random);
  const kinds = Object.keys(makers) as RedactionKind[];
  const turns = lines.map((l) => JSON.parse(l) as { query: string; response: string });
  const plants: Array<{ kind: RedactionKind; secret: string }> = [];
  for (let i = 0; i < count; i++) {
    const kind = kinds[i % kinds.length] as RedactionKind;
    const { sentence, secret } = makers[kind]();
    const turn = turns[Math.floor(random() * turns.length)] as { query: string; response: string };
    if (random() < 0.5) turn.query = `${turn.query} Also, ${sentence}.`;
    else turn.response = `${turn.response} (Noted: ${sentence}.)`;
    plants.push({ kind, secret });
  }
  return { lines: turns.map((t) => JSON.stringify(t)), plants };
}

/** The dev conversations as they are, through the redaction with personal data on. */
function falsePositives(dir: string): RedactionReport['falsePositives'] {
  const byKind: RedactionCounts = {};
  const examples: string[] = [];
  let turns = 0;
  let words = 0;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  for (const file of files) {
    for (const line of replayLinesFromFile(readFileSync(`${dir}${file}`, 'utf8'), file).lines) {
      const t = JSON.parse(line) as { query: string; response: string };
      for (const text of [t.query, t.response]) {
        turns += 1;
        words += text.split(/\s+/).filter(Boolean).length;
        const r = redact(text, { personalData: true });
        addCounts(byKind, r.counts);
        if (Object.keys(r.counts).length > 0 && examples.length < 10)
          examples.push(`${file}: ${Object.keys(r.counts).join(', ')}`);
      }
    }
  }
  return {
    conversations: files.length,
    turns,
    words,
    total: Object.values(byKind).reduce((a, b) => a + (b ?? 0), 0),
    byKind,
    examples,
  };
}

export async function benchRedaction(
  dir: string,
  options: { plants?: number; conversation?: string } = {},
): Promise<RedactionReport> {
  const conversation = options.conversation ?? 'conv-30.json';
  const original = replayLinesFromFile(readFileSync(`${dir}${conversation}`, 'utf8'), conversation).lines.filter(
    (l) => l.trim() !== '',
  );
  const { lines, plants } = plant(original, options.plants ?? 300);
  const userId = (JSON.parse(lines[0] as string) as { userId: string }).userId;
  // The prod stage's policy: personal identifiers redacted too.
  const stack = await startHarness({ stage: 'prod', logLevel: 'SILENT' });
  try {
    await stack.replayLines(lines);
    await stack.waitUntilDrained();
    const { info } = stack;
    const s3 = new S3Client({
      region: info.region,
      endpoint: info.endpoints.s3,
      forcePathStyle: true,
      credentials: info.credentials,
    });
    const items = await stack.scanItems();
    const objectKeys = (
      await Promise.all(
        [userPrefix(userId), claimsPrefix(userId), rejectedPrefix()].map((p) => listAllKeys(s3, info.bucketName, p)),
      )
    ).flat();
    const objects = await Promise.all(objectKeys.map((key) => getText(s3, info.bucketName, key)));
    s3.destroy();
    // Stored JSON escapes line breaks and quotes: look for each value as JSON text holds it too.
    const stores = {
      dynamodb: JSON.stringify(items),
      s3: objects.join('\n'),
      prompts: JSON.stringify(stack.emulators.converse.requests),
    };
    const found = (store: string, secret: string) =>
      store.includes(secret) || store.includes(JSON.stringify(secret).slice(1, -1));
    const reached = { dynamodb: 0, s3: 0, prompts: 0 };
    const reachedKinds = new Set<string>();
    for (const p of plants) {
      for (const k of Object.keys(reached) as Array<keyof typeof reached>) {
        if (found(stores[k], p.secret)) {
          reached[k] += 1;
          reachedKinds.add(p.kind);
        }
      }
    }
    const input = lines.join('\n');
    const turnItems = JSON.stringify(
      items.filter((i) => String((i as { sk?: unknown }).sk).startsWith(keys.turnPrefix)),
    );
    const control = {
      foundInInput: plants.filter((p) => found(input, p.secret)).length,
      modelCalls: stack.emulators.converse.requests.length,
      markersInTurns: turnItems.split('[redacted:').length - 1,
    };
    const plantedByKind: Partial<Record<RedactionKind, number>> = {};
    for (const p of plants) plantedByKind[p.kind] = (plantedByKind[p.kind] ?? 0) + 1;
    return {
      conversation,
      turns: lines.length,
      planted: plants.length,
      plantedByKind,
      reached,
      reachedKinds: [...reachedKinds].sort(),
      control,
      falsePositives: falsePositives(dir),
    };
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({ options: { plants: { type: 'string' }, conversation: { type: 'string' } } });
  const dir = process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname;
  printReport(
    benchRedaction(dir, {
      ...(values.plants ? { plants: Number(values.plants) } : {}),
      ...(values.conversation ? { conversation: values.conversation } : {}),
    }),
  );
}
