/**
 * The models we support or test against, with what Amazon Bedrock enforces for each, and
 * how a stage's region picks the id the reflector invokes. Pure data and functions: the
 * CDK app derives the MODEL_ID and the InvokeModel grant from it, the model adapter takes
 * each model's output limit from it, and the local Converse stand-in refuses what Bedrock
 * refuses with it.
 *
 * Sources (AWS documentation unless said otherwise):
 * - Inference profiles, source and destination Regions:
 *   https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html and
 *   https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html. The
 *   Regions of each geography follow AWS's own CDK construct library, which lists them per
 *   geography from that page (@aws-cdk/aws-bedrock-alpha, CrossRegionInferenceProfileRegion:
 *   https://docs.aws.amazon.com/cdk/api/v2/docs/@aws-cdk_aws-bedrock-alpha.CrossRegionInferenceProfileRegion.html).
 * - A bare model id of a model served only through inference profiles is refused on demand:
 *   "Invocation of model ID … with on-demand throughput isn’t supported. Retry your request
 *   with the ID or ARN of an inference profile that contains this model." (ValidationException,
 *   HTTP 400; Bedrock's answer as reported in e.g. anthropics/anthropic-sdk-python#894).
 * - Per-model limits: each model's card, https://docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html
 */

/** A geography of cross-Region inference profiles: the id prefix (`us.`, `eu.`, …) without its dot. */
export type Geography = 'us' | 'eu' | 'apac' | 'jp' | 'au';

/**
 * How a stage invokes its model: the bare model id in the stack's own Region ('in-region'),
 * the geographic cross-Region inference profile of that Region ('geo'), or the global one.
 */
export type InferenceScope = 'in-region' | 'geo' | 'global';

/**
 * Source Regions of each geography's profiles (the Regions that may call them; a profile
 * routes to destination Regions of the same geography). A Region may be in two geographies
 * (Tokyo: `jp` and `apac`); the narrower one is preferred (GEOGRAPHY_PREFERENCE), so data
 * stays closest to where it was.
 */
export const GEOGRAPHY_REGIONS: Readonly<Record<Geography, readonly string[]>> = {
  us: ['us-east-1', 'us-east-2', 'us-west-2'],
  eu: ['eu-central-1', 'eu-central-2', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'eu-west-1', 'eu-west-2', 'eu-west-3'],
  apac: [
    'ap-east-2',
    'ap-northeast-1',
    'ap-northeast-2',
    'ap-northeast-3',
    'ap-south-1',
    'ap-south-2',
    'ap-southeast-1',
    'ap-southeast-2',
    'ap-southeast-3',
    'ap-southeast-4',
    'ap-southeast-5',
    'ap-southeast-7',
    'me-central-1',
  ],
  jp: ['ap-northeast-1', 'ap-northeast-3'],
  au: ['ap-southeast-2', 'ap-southeast-4'],
};
const GEOGRAPHY_PREFERENCE: readonly Geography[] = ['jp', 'au', 'us', 'eu', 'apac'];

/** The commercial Regions our geographies cover: where a global profile may be called from. */
export const COMMERCIAL_REGIONS: readonly string[] = [...new Set(Object.values(GEOGRAPHY_REGIONS).flat())].sort();

export interface BedrockModel {
  /** The foundation model id (no profile prefix). */
  id: string;
  name: string;
  /**
   * Regions where Bedrock serves the bare id on demand; elsewhere it answers the on-demand
   * refusal above. `'*'`: every Region (our offline model).
   */
  inRegion: readonly string[] | '*';
  /** The most output tokens a request may ask for (`inferenceConfig.maxTokens`). */
  maxOutputTokens: number;
  /** Bedrock refuses a request that sets both `temperature` and `topP`. */
  exclusiveSampling: boolean;
  /** Geographies with a cross-Region inference profile of this model. */
  geographies: readonly Geography[];
  /** A global cross-Region inference profile (`global.` prefix) exists. */
  global: boolean;
  /**
   * Converse structured output (`outputConfig.textFormat`, lib/model/structured-output.ts)
   * is served: the reflector asks for its JSON answer that way; otherwise through a forced tool.
   */
  structuredOutput: boolean;
  /** Where the numbers come from. */
  source: string;
}

/**
 * How a structured answer (a batch's reflection, a nightly or weekly run's) is asked for:
 * 'schema', sent as a JSON schema the model must follow (structured output where
 * the model serves it, `structuredOutput` below, else a forced tool); 'prompt', said in the
 * system prompt as a TypeScript-like type and read from the answer's text
 * (lib/model/prompted-answer.ts: fewer input tokens, no constrained decoding).
 */
export type AnswerShape = 'schema' | 'prompt';

/** Our local stand-in's model (lib/offline-model): a rule-based reflector, not an LLM. */
export const OFFLINE_MODEL_ID = 'offline.rule-reflector-v1';

export const BEDROCK_MODELS: readonly BedrockModel[] = [
  {
    // Model card: max output 64K tokens; profiles us., eu., jp., au. and global. (no apac.);
    // no in-Region on-demand use. Anthropic's 4.5 models take temperature or top_p, not both:
    // Bedrock answers "`temperature` and `top_p` cannot both be specified for this model.
    // Please use only one." (ValidationException; e.g. aws-samples/sample-connector-for-bedrock#87).
    id: 'anthropic.claude-haiku-4-5-20251001-v1:0',
    name: 'Claude Haiku 4.5',
    inRegion: [],
    maxOutputTokens: 64_000,
    exclusiveSampling: true,
    geographies: ['us', 'eu', 'jp', 'au'],
    global: true,
    // "On Amazon Bedrock, structured outputs are available for … Claude Sonnet 4.5 … and Claude
    // Haiku 4.5" (https://platform.claude.com/docs/en/build-with-claude/structured-outputs).
    structuredOutput: true,
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-anthropic-claude-haiku-4-5.html',
  },
  {
    id: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    name: 'Claude Sonnet 4.5',
    inRegion: [],
    maxOutputTokens: 64_000,
    exclusiveSampling: true,
    geographies: ['us', 'eu', 'apac', 'jp', 'au'],
    global: true,
    structuredOutput: true,
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-anthropic-claude-sonnet-4-5.html',
  },
  {
    // On demand in-Region in us-east-1; elsewhere through us./eu./apac. profiles (from
    // eu-west-1 the bare id is refused: strands-agents/harness-sdk#38). Max output 10K tokens
    // (https://docs.aws.amazon.com/nova/latest/userguide/complete-request-schema.html; a larger
    // maxTokens fails: aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws#175).
    id: 'amazon.nova-lite-v1:0',
    name: 'Amazon Nova Lite',
    inRegion: ['us-east-1'],
    maxOutputTokens: 10_000,
    exclusiveSampling: false,
    geographies: ['us', 'eu', 'apac'],
    global: false,
    // Not among the models AWS lists for structured output (Anthropic's Claude 4.5/4.6 and
    // open-weight models, https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html;
    // as summarised in langchain-ai/langchain-aws#883): a forced tool.
    structuredOutput: false,
    source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-amazon-nova-lite.html',
  },
  {
    // Ours: served by the local Converse stand-in in any Region; 8,192 output tokens is the
    // limit we chose for it (its answers are a few hundred tokens), enforced like Bedrock's.
    id: OFFLINE_MODEL_ID,
    name: 'offline model (rule-based reflector, not an LLM)',
    inRegion: '*',
    maxOutputTokens: 8_192,
    exclusiveSampling: false,
    geographies: [],
    global: false,
    // It stands in for Claude Haiku 4.5, the reflector's model: answers as Haiku is asked.
    structuredOutput: true,
    source: 'lib/offline-model/rule-reflector.ts (our own limit)',
  },
];

const PREFIXES = new Set<string>([...Object.keys(GEOGRAPHY_REGIONS), 'global']);

/** The model a foundation model id names, or undefined. */
export const bedrockModel = (foundationModelId: string): BedrockModel | undefined =>
  BEDROCK_MODELS.find((m) => m.id === foundationModelId);

/** An invoked id split into its profile prefix (`us`, `global`, …; null for a bare id) and foundation model id. */
export function parseModelId(modelId: string): { prefix: Geography | 'global' | null; foundationModelId: string } {
  const dot = modelId.indexOf('.');
  const head = dot > 0 ? modelId.slice(0, dot) : '';
  if (PREFIXES.has(head) && bedrockModel(modelId.slice(dot + 1)))
    return { prefix: head as Geography | 'global', foundationModelId: modelId.slice(dot + 1) };
  return { prefix: null, foundationModelId: modelId };
}

/** Whether the model an invoked id (bare or profile) names serves structured output; false for a model not in the catalogue. */
export const supportsStructuredOutput = (modelId: string): boolean =>
  bedrockModel(parseModelId(modelId).foundationModelId)?.structuredOutput ?? false;

/** The output limit of the model an invoked id (bare or profile) names; undefined for a model not in the catalogue. */
export const maxOutputTokensOf = (modelId: string): number | undefined =>
  bedrockModel(parseModelId(modelId).foundationModelId)?.maxOutputTokens;

const servesInRegion = (model: BedrockModel, region: string) =>
  model.inRegion === '*' || model.inRegion.includes(region);

/** The narrowest geography of the model whose profiles may be called from `region`, or undefined. */
export function geographyOf(model: BedrockModel, region: string): Geography | undefined {
  return GEOGRAPHY_PREFERENCE.find((g) => model.geographies.includes(g) && GEOGRAPHY_REGIONS[g].includes(region));
}

/** What a stage in `region` invokes, and where Bedrock may run it. */
export interface ModelInvocation {
  /** The id to send (MODEL_ID): the bare model id or an inference profile id. */
  modelId: string;
  foundationModelId: string;
  /** The inference profile's prefix; null when the bare id is invoked in-Region. */
  profile: Geography | 'global' | null;
  /**
   * The Regions the catalogue knows the call may run in (the profile's destinations). AWS adds
   * destinations, so the grant names the foundation model in every Region instead (infra/stacks/reflector-model.ts).
   */
  destinationRegions: readonly string[];
  /** A global profile also routes through the Region-less foundation-model ARN (`arn:…:bedrock:::foundation-model/…`). */
  regionless: boolean;
}

export class UnsupportedModelRegionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedModelRegionError';
  }
}

/**
 * The invocation of `foundationModelId` from `region` with `scope`. Throws
 * UnsupportedModelRegionError, naming what to change, when Bedrock would refuse it.
 */
export function invocationFor(foundationModelId: string, region: string, scope: InferenceScope): ModelInvocation {
  const model = bedrockModel(foundationModelId);
  if (!model)
    throw new UnsupportedModelRegionError(
      `${foundationModelId} is not in the model catalogue (lib/model/bedrock-models.ts): add it there with its limits`,
    );
  if (scope === 'in-region') {
    if (!servesInRegion(model, region))
      throw new UnsupportedModelRegionError(
        `${model.name} is not served on demand in ${region} by its bare id: use inference scope 'geo' or 'global'`,
      );
    return {
      modelId: model.id,
      foundationModelId: model.id,
      profile: null,
      destinationRegions: [region],
      regionless: false,
    };
  }
  if (scope === 'global') {
    if (!model.global || !COMMERCIAL_REGIONS.includes(region))
      throw new UnsupportedModelRegionError(`${model.name} has no global inference profile callable from ${region}`);
    return {
      modelId: `global.${model.id}`,
      foundationModelId: model.id,
      profile: 'global',
      destinationRegions: [region],
      regionless: true,
    };
  }
  const geography = geographyOf(model, region);
  if (!geography) {
    const alternatives = [model.global ? "'global'" : '', servesInRegion(model, region) ? "'in-region'" : '']
      .filter(Boolean)
      .join(' or ');
    throw new UnsupportedModelRegionError(
      `${model.name} has no geographic inference profile callable from ${region}${alternatives ? `: use inference scope ${alternatives}` : ''}`,
    );
  }
  return {
    modelId: `${geography}.${model.id}`,
    foundationModelId: model.id,
    profile: geography,
    destinationRegions: GEOGRAPHY_REGIONS[geography],
    regionless: false,
  };
}

/** Every Region the model can be invoked from with `scope`, each with its invocation (the CDK app's per-Region table). */
export function invocationsByRegion(
  foundationModelId: string,
  scope: InferenceScope,
): Array<{ region: string; invocation: ModelInvocation }> {
  return COMMERCIAL_REGIONS.flatMap((region) => {
    try {
      return [{ region, invocation: invocationFor(foundationModelId, region, scope) }];
    } catch (error) {
      if (error instanceof UnsupportedModelRegionError) return [];
      throw error;
    }
  });
}

/**
 * Input tokens Bedrock adds to a Claude request that forces a tool (`tool_choice` any/tool):
 * the hidden tool-use system prompt, 588 tokens for Claude Haiku/Sonnet/Opus 4.5
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview; an older table on
 * the Bedrock parameters page gives 313: the higher figure, so budgets are not flattered).
 */
export const TOOL_USE_SYSTEM_PROMPT_TOKENS = 588;

/**
 * Input tokens we count for the system prompt Claude receives with structured output: "When
 * using structured outputs, Claude automatically receives an additional system prompt explaining
 * the expected output format … The injected prompt costs you tokens like any other system
 * prompt" (https://platform.claude.com/docs/en/build-with-claude/structured-outputs, "Prompt
 * modification and token costs"). Its size is not published: we count the schema's own text
 * (it must convey the format) plus this allowance for the explanation around it, an assumption
 * to check against CountTokens or a real call's usage.
 */
export const STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS = 100;

/** "For Claude, a token approximately represents 3.5 English characters" (https://platform.claude.com/docs/en/about-claude/glossary). */
export const CLAUDE_CHARS_PER_TOKEN = 3.5;

/**
 * The most tokens a call can use, counted before it is made: its system prompt, prompt and
 * tool definition at CLAUDE_CHARS_PER_TOKEN, the tool-use prompt Bedrock adds to a forced tool
 * (which bounds structured output and the type in the prompt too), and `maxTokens` of answer.
 * The nightly and weekly runs' token budgets (req R-SLP-13) are kept with it.
 */
export function callCeiling(call: { system: string; prompt: string; tool: unknown }, maxTokens: number): number {
  const chars = call.system.length + call.prompt.length + JSON.stringify(call.tool).length;
  return Math.ceil(chars / CLAUDE_CHARS_PER_TOKEN) + TOOL_USE_SYSTEM_PROMPT_TOKENS + maxTokens;
}
