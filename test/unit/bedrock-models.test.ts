import { describe, expect, it } from 'vitest';
import {
  bedrockModel,
  invocationFor,
  invocationsByRegion,
  maxOutputTokensOf,
  OFFLINE_MODEL_ID,
  parseModelId,
  UnsupportedModelRegionError,
} from '../../lib/model/bedrock-models.js';

const HAIKU = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const SONNET = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';

describe('the model catalogue', () => {
  it('knows our default, a second Claude, a Nova model and the offline model, each with its limits', () => {
    expect(bedrockModel(HAIKU)).toMatchObject({ maxOutputTokens: 64_000, exclusiveSampling: true, inRegion: [] });
    expect(bedrockModel(SONNET)).toMatchObject({ maxOutputTokens: 64_000, exclusiveSampling: true });
    expect(bedrockModel(NOVA)).toMatchObject({
      maxOutputTokens: 10_000,
      exclusiveSampling: false,
      inRegion: ['us-east-1'],
    });
    expect(bedrockModel(OFFLINE_MODEL_ID)).toMatchObject({ maxOutputTokens: 8_192, inRegion: '*' });
    expect(bedrockModel('anthropic.claude-v9')).toBeUndefined();
  });

  it('splits a profile id into its prefix and foundation model, and leaves unknown prefixes alone', () => {
    expect(parseModelId(`us.${HAIKU}`)).toEqual({ prefix: 'us', foundationModelId: HAIKU });
    expect(parseModelId(`global.${HAIKU}`)).toEqual({ prefix: 'global', foundationModelId: HAIKU });
    expect(parseModelId(HAIKU)).toEqual({ prefix: null, foundationModelId: HAIKU });
    expect(parseModelId('xx.anthropic.claude-haiku-4-5-20251001-v1:0')).toEqual({
      prefix: null,
      foundationModelId: 'xx.anthropic.claude-haiku-4-5-20251001-v1:0',
    });
    expect(maxOutputTokensOf(`eu.${HAIKU}`)).toBe(64_000);
    expect(maxOutputTokensOf(OFFLINE_MODEL_ID)).toBe(8_192);
    expect(maxOutputTokensOf('somebody.else-v1')).toBeUndefined();
  });
});

describe('the invoked id, derived from the Region', () => {
  it('picks the geography of the Region, the narrowest when two hold it', () => {
    expect(invocationFor(HAIKU, 'us-east-1', 'geo')).toEqual({
      modelId: `us.${HAIKU}`,
      foundationModelId: HAIKU,
      profile: 'us',
      destinationRegions: ['us-east-1', 'us-east-2', 'us-west-2'],
      regionless: false,
    });
    expect(invocationFor(HAIKU, 'eu-west-1', 'geo').modelId).toBe(`eu.${HAIKU}`);
    expect(invocationFor(HAIKU, 'ap-northeast-1', 'geo').modelId).toBe(`jp.${HAIKU}`);
    expect(invocationFor(HAIKU, 'ap-southeast-2', 'geo').modelId).toBe(`au.${HAIKU}`);
    // Sonnet 4.5 has an apac. profile too: Tokyo still gets the narrower jp., Singapore apac.
    expect(invocationFor(SONNET, 'ap-northeast-1', 'geo').modelId).toBe(`jp.${SONNET}`);
    expect(invocationFor(SONNET, 'ap-southeast-1', 'geo').modelId).toBe(`apac.${SONNET}`);
  });

  it('uses the global profile, routed also through the Region-less foundation model, when asked', () => {
    expect(invocationFor(HAIKU, 'ap-southeast-1', 'global')).toMatchObject({
      modelId: `global.${HAIKU}`,
      destinationRegions: ['ap-southeast-1'],
      regionless: true,
    });
  });

  it('invokes the bare id only where Bedrock serves it on demand', () => {
    expect(invocationFor(NOVA, 'us-east-1', 'in-region')).toMatchObject({
      modelId: NOVA,
      profile: null,
      destinationRegions: ['us-east-1'],
    });
    expect(invocationFor(OFFLINE_MODEL_ID, 'eu-west-3', 'in-region').modelId).toBe(OFFLINE_MODEL_ID);
    expect(() => invocationFor(NOVA, 'eu-west-1', 'in-region')).toThrow(/not served on demand in eu-west-1/);
    expect(() => invocationFor(HAIKU, 'us-east-1', 'in-region')).toThrow(UnsupportedModelRegionError);
  });

  it('refuses a Region without a profile of the model, naming the scope that works', () => {
    expect(() => invocationFor(HAIKU, 'ap-southeast-1', 'geo')).toThrow(
      "Claude Haiku 4.5 has no geographic inference profile callable from ap-southeast-1: use inference scope 'global'",
    );
    expect(() => invocationFor(NOVA, 'ap-southeast-1', 'global')).toThrow(/no global inference profile/);
    expect(() => invocationFor('anthropic.claude-v9', 'us-east-1', 'geo')).toThrow(/not in the model catalogue/);
  });

  it('lists every Region a scope can be used from, with its id', () => {
    const rows = invocationsByRegion(HAIKU, 'geo');
    expect(rows.find((r) => r.region === 'us-west-2')?.invocation.modelId).toBe(`us.${HAIKU}`);
    expect(rows.map((r) => r.region)).not.toContain('ap-southeast-1');
    expect(invocationsByRegion(NOVA, 'in-region').map((r) => r.region)).toEqual(['us-east-1']);
  });
});
