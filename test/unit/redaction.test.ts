/**
 * Secrets always, personal identifiers by stage setting, counted by kind.
 * The planted values are made up in their issuers' formats (never real credentials).
 */
import { describe, expect, it } from 'vitest';
import { redact, redactFields } from '../../lib/turns/redaction.js';

/** Each kind: how it appears in a sentence, and the part that must not survive. */
const PLANTED: Record<string, { text: string; secret: string }> = {
  aws_access_key: { text: 'AKIAIOSFODNN7EXAMPLE', secret: 'AKIAIOSFODNN7EXAMPLE' },
  aws_secret_key: { text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', secret: 'wJalrXUtnFEMI' },
  jwt: {
    text: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    secret: 'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  },
  private_key: {
    text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\n-----END RSA PRIVATE KEY-----',
    secret: 'MIIEowIBAAKCAQEA',
  },
  api_token: { text: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', secret: 'abcdefghijklmnop' },
  url_password: { text: 'postgres://admin:s3cr3t-Pa55@db.example.com:5432/app', secret: 's3cr3t-Pa55' },
  connection_secret: { text: 'Server=db;Database=app;User Id=sa;Password=Tr0ub4dor&3;', secret: 'Tr0ub4dor' },
};
const SECRETS = Object.fromEntries(Object.entries(PLANTED).map(([k, v]) => [k, v.text]));

describe('redaction', () => {
  it.each(Object.entries(PLANTED))('redacts a %s wherever it sits in a sentence, and counts it', (kind, planted) => {
    const { text, counts } = redact(`Here it is: ${planted.text} — keep it safe.`, { personalData: false });
    expect(counts).toEqual({ [kind]: 1 });
    expect(text).toContain(`[redacted:${kind}]`);
    expect(text).not.toContain(planted.secret);
  });

  it('finds a private key in a raw JSON body, where its line breaks are escaped', () => {
    const body = JSON.stringify({ query: `my key ${SECRETS.private_key}` });
    const { text, counts } = redact(body, { personalData: false });
    expect(counts.private_key).toBe(1);
    expect(text).not.toContain('MIIEowIBAAKCAQEA');
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it('redacts personal identifiers only when the stage asks, and checks what it can', () => {
    const text =
      'Mail ana.perez@example.org or call +44 20 7946 0958 / (555) 123-4567; card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.';
    expect(redact(text, { personalData: false }).counts).toEqual({});
    const r = redact(text, { personalData: true });
    expect(r.counts).toEqual({ email: 1, phone: 2, card_number: 1, iban: 1 });
    expect(r.text).not.toMatch(/example\.org|7946|4111|3704/);
  });

  it('leaves ordinary text, dates, times, amounts and numbers that fail their checks alone', () => {
    const text =
      'On 2023-05-08 at 14:04 I paid $1,250.00 for 3 tickets; order 4111 1111 1111 1112; the password was long; see https://example.com/path?q=1.';
    expect(redact(text, { personalData: true })).toEqual({ text, counts: {} });
  });

  it('redacting twice changes nothing', () => {
    const once = redact(Object.values(SECRETS).join('\n'), { personalData: true });
    expect(redact(once.text, { personalData: true })).toEqual({ text: once.text, counts: {} });
  });

  it('redacts every free-text field of a message and leaves identities and structure', () => {
    const message = {
      type: 'turn.saved',
      userId: 'u-1',
      sessionId: 's-1',
      query: `key ${SECRETS.aws_access_key}`,
      response: 'ok',
      attributes: { note: SECRETS.api_token },
      sources: [{ domain: 'example.com', outcome: 'success' }],
    };
    const { value, counts } = redactFields(message, { personalData: false });
    expect(counts).toEqual({ aws_access_key: 1, api_token: 1 });
    expect(value).toEqual({
      ...message,
      query: 'key [redacted:aws_access_key]',
      attributes: { note: '[redacted:api_token]' },
    });
  });

  it('leaves an imported archive’s table keys and bytes as they are, and redacts its text', () => {
    // Digits that would read as a phone number or a card if they were text.
    const record = {
      pk: 'USER#u-1',
      sk: 'TURN#4111111111111111',
      gsi1pk: 'ACTIVITY#2026-02-06#3',
      gsi1sk: 'USER#+14155550123',
      text: 'call +1 415 555 0123',
    };
    const base64 = Buffer.from('4111 1111 1111 1111 and +1 415 555 0123').toString('base64');
    const { value } = redactFields(
      { archive: { records: [record], documents: [{ path: 'index/search/x.seg.0', base64 }] } },
      { personalData: true },
    );
    expect(value.archive.records[0]).toEqual({ ...record, text: expect.stringContaining('[redacted:') });
    expect(value.archive.documents[0]?.base64).toBe(base64);
  });
});
