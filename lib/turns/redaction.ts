/**
 * Secrets and personal identifiers kept out of the memory: text is redacted
 * before a turn is stored or sent to a model. What was found is counted by kind; the value
 * itself is never logged, and a redacted span becomes `[redacted:{kind}]`, which no detector
 * matches again (redacting twice changes nothing: publisher and signal function both do it).
 *
 * Secrets are always redacted. Personal identifiers (emails, phone numbers, card numbers,
 * IBANs) are redacted when the stage says so (`redaction.personalData`).
 *
 * Formats, each from its issuer:
 * - AWS access key ids: 20 characters, `AKIA` (long-term) or `ASIA` (temporary, STS) first
 *   (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids);
 *   a secret access key (40 characters) only where it is named, as a bare 40-character string
 *   is also a hash or an id;
 * - PEM private keys (RFC 7468 §10–11: `-----BEGIN … PRIVATE KEY-----`);
 * - JWTs (RFC 7519: three base64url parts; a JSON header, so `eyJ` first);
 * - API tokens with a published prefix: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 *   `github_pat_`), Slack (`xox?-`), Stripe (`sk_live_`, `rk_test_`…), Google (`AIza`), OpenAI and
 *   Anthropic (`sk-`, `sk-ant-`), and a bearer token after `Bearer`;
 * - a password in a URL (RFC 3986 §3.2.1 userinfo `user:password@`): the password only;
 * - connection-string and config secrets: `Password=`/`Pwd=`, `AccountKey=`, `password:`…;
 * - card numbers: 13–19 digits (spaces or dashes between) passing the Luhn check (ISO/IEC 7812);
 * - IBANs: checked by ibantools (country length, BBAN format, ISO 7064 mod 97-10).
 */
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';

export const SECRET_KINDS = [
  'private_key',
  'jwt',
  'aws_access_key',
  'aws_secret_key',
  'api_token',
  'url_password',
  'connection_secret',
] as const;
export const PERSONAL_KINDS = ['email', 'card_number', 'iban', 'phone'] as const;
export type RedactionKind = (typeof SECRET_KINDS)[number] | (typeof PERSONAL_KINDS)[number];
export type RedactionCounts = Partial<Record<RedactionKind, number>>;

export interface RedactionPolicy {
  /** Emails, phone numbers, card numbers and IBANs too (a stage setting). */
  personalData: boolean;
}

interface Detector {
  kind: RedactionKind;
  pattern: RegExp;
  /** The part of a match to replace (default: all of it), and whether the match counts. */
  replace?: (match: string, ...groups: string[]) => string | null;
}

const marker = (kind: RedactionKind) => `[redacted:${kind}]`;

/** A line break as text holds it, or as a JSON string escapes it (a raw message body). */
const NL = String.raw`(?:\r?\n|(?:\\r)?\\n)`;

const DETECTORS: readonly Detector[] = [
  {
    kind: 'private_key',
    pattern: new RegExp(
      `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:${NL}|[A-Za-z0-9+/=:, -])*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`,
      'g',
    ),
  },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  { kind: 'aws_access_key', pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  {
    kind: 'aws_secret_key',
    pattern:
      /\b(aws_?secret_?access_?key|secret_?access_?key|SecretAccessKey)(["']?\s*[:=]\s*["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    replace: (_m, name, sep) => `${name}${sep}${marker('aws_secret_key')}`,
  },
  {
    kind: 'api_token',
    pattern:
      /\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_-]{35}|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,})/g,
  },
  {
    kind: 'api_token',
    pattern: /\b(Bearer\s+)([A-Za-z0-9._~+/-]{20,}=*)/g,
    replace: (_m, bearer) => `${bearer}${marker('api_token')}`,
  },
  {
    kind: 'url_password',
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"'<>]+:)([^\s@/"'<>]+)(@)/gi,
    replace: (_m, head, password, at) =>
      password.startsWith('[redacted:') ? null : `${head}${marker('url_password')}${at}`,
  },
  {
    kind: 'connection_secret',
    pattern:
      /\b(password|passwd|pwd|accountkey|sharedaccesskey|client_secret|api_?key)(\s*[:=]\s*["']?)([^\s;"',]{4,})/gi,
    replace: (_m, name, sep, value) =>
      value.startsWith('[redacted:') ? null : `${name}${sep}${marker('connection_secret')}`,
  },
];

const PERSONAL_DETECTORS: readonly Detector[] = [
  { kind: 'email', pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g },
  {
    kind: 'iban',
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g,
    replace: (m) => (isValidIBAN(electronicFormatIBAN(m) ?? '') ? marker('iban') : null),
  },
  {
    kind: 'card_number',
    pattern: /\b\d(?:[ -]?\d){12,18}\b/g,
    replace: (m) => (luhn(m.replace(/\D/g, '')) ? marker('card_number') : null),
  },
  // International (+country code) or North American (3-3-4) numbers; a date (4-2-2) is neither.
  {
    kind: 'phone',
    pattern:
      /(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\b\d{3}[.-]\d{3}[.-]\d{4})\b/g,
  },
];

/** ISO/IEC 7812 check digit (the Luhn algorithm). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length >= 13 && sum % 10 === 0;
}

/** `text` with every secret (and, by policy, personal identifier) replaced, and what was found. */
export function redact(text: string, policy: RedactionPolicy): { text: string; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  let out = text;
  for (const d of policy.personalData ? [...DETECTORS, ...PERSONAL_DETECTORS] : DETECTORS) {
    out = out.replace(d.pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2).map((g) => String(g ?? ''));
      const replaced = d.replace ? d.replace(match, ...groups) : marker(d.kind);
      if (replaced === null) return match;
      counts[d.kind] = (counts[d.kind] ?? 0) + 1;
      return replaced;
    });
  }
  return { text: out, counts };
}

/**
 * Keys whose values are identities or structure, never free text: left as they are. An
 * imported archive (lib/archive/user-archive.ts) adds its records' table keys (`pk`, `sk`,
 * `gsi1pk`, `gsi1sk`: a zero-padded turn id must not read as a phone number) and its
 * objects' bytes (`base64`).
 */
const STRUCTURAL = new Set([
  'type',
  'userId',
  'sessionId',
  'timestamp',
  'episodeId',
  'domain',
  'outcome',
  'validation',
  'route',
  'key',
  'bucket',
  'path',
  'id',
  'ids',
  'pk',
  'sk',
  'gsi1pk',
  'gsi1sk',
  'base64',
]);

/** Every free-text string of a message (at any depth) redacted; identities and structure kept. */
export function redactFields<T>(value: T, policy: RedactionPolicy): { value: T; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') {
      if (STRUCTURAL.has(key)) return v;
      const r = redact(v, policy);
      addCounts(counts, r.counts);
      return r.text;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return { value: walk(value, '') as T, counts };
}

export function addCounts(into: RedactionCounts, more: RedactionCounts): RedactionCounts {
  for (const [k, n] of Object.entries(more) as Array<[RedactionKind, number]>) into[k] = (into[k] ?? 0) + n;
  return into;
}

export const totalRedacted = (counts: RedactionCounts): number =>
  Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
