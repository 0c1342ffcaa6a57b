/**
 * What Bedrock refuses in a Converse request, for the local stand-in: the same error type,
 * HTTP status and message, so the model adapter meets locally what it would meet in the
 * cloud. All are ValidationException, HTTP 400
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors).
 *
 * Messages, as Bedrock writes them:
 * - an unknown model, or a profile this Region cannot call: "The provided model identifier
 *   is invalid." (strands-agents/harness-sdk#38, an `eu.` profile the Region lacked);
 * - a bare id of a model served only through inference profiles: the on-demand refusal
 *   (lib/model/bedrock-models.ts);
 * - a blank text block: "The text field in the ContentBlock object at messages.0.content.0 is
 *   blank. Add text to the text field, and try again." — whitespace-only text included
 *   (earendil-works/pi#4975, continuedev/continue#9767). A system block's text has a
 *   minimum length of 1 (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemContentBlock.html),
 *   refused with AWS's constraint message; a whitespace-only one is refused by the model
 *   ("The model returned the following errors: …", the form of NousResearch/hermes-agent#63983);
 * - tool names: 1–64 characters of `[a-zA-Z0-9_-]+`
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html,
 *   and the same for toolChoice.tool.name: API_runtime_SpecificToolChoice.html), refused with
 *   AWS's constraint message ("1 validation error detected: Value 'Complete Session' at
 *   'toolConfig.tools.22.member.toolSpec.name' failed to satisfy constraint: Member must satisfy
 *   regular expression pattern: [a-zA-Z0-9_-]+", aws-samples/remote-swe-agents#457; list
 *   positions count from 1);
 * - temperature and topP together, for models that take one of them: "The model returned the
 *   following errors: `temperature` and `top_p` cannot both be specified for this model.
 *   Please use only one." (aws-samples/sample-connector-for-bedrock#87);
 * - maxTokens above the model's limit: "The maximum tokens you requested exceeds the model
 *   limit of 4096. Try again with a maximum tokens value that is lower than 4096."
 *   (vercel/ai#2772, langgenius/dify#10390).
 * A toolChoice naming a tool that is not in `tools` is refused too; AWS documents no text for
 * it, so that message is ours.
 *
 * Structured output (`outputConfig.textFormat`, lib/model/structured-output.ts): its `type`
 * must be `json_schema` (an enum, API_runtime_OutputFormat.html; AWS's constraint message) and
 * its `jsonSchema.schema` a JSON string (API_runtime_JsonSchemaDefinition.html); a schema outside
 * the supported subset gets "a 400 error immediately"
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html), worded as
 * Anthropic words it ("output_format.schema: For 'integer' type, property 'minimum' is not
 * supported", agentjido/req_llm#302); a model that does not serve it is refused in the form
 * Bedrock uses for another `outputConfig` field it does not take ("This model doesn't support
 * the effort field"). Those two texts are modelled, not documented.
 */
import { bedrockModel, COMMERCIAL_REGIONS, GEOGRAPHY_REGIONS, parseModelId } from '../../lib/model/bedrock-models.js';
import { structuredOutputSchemaRefusal } from '../../lib/model/structured-output.js';
import type { ConverseError, ConverseRequest } from './converse-protocol.js';

const invalid = (message: string): ConverseError => ({ status: 400, errorType: 'ValidationException', message });
const constraint = (value: string, at: string, rule: string) =>
  invalid(`1 validation error detected: Value '${value}' at '${at}' failed to satisfy constraint: Member must ${rule}`);

const TOOL_NAME = /^[a-zA-Z0-9_-]+$/;
export const INVALID_MODEL_ID = 'The provided model identifier is invalid.';

function toolNameRefusal(name: string, at: string): ConverseError | null {
  if (name.length > 64) return constraint(name, at, 'have length less than or equal to 64');
  if (!TOOL_NAME.test(name)) return constraint(name, at, 'satisfy regular expression pattern: [a-zA-Z0-9_-]+');
  return null;
}

/** The request's shape: what AWS validates before the model is looked at. */
function shapeRefusal(request: ConverseRequest): ConverseError | null {
  for (const [i, block] of (request.system ?? []).entries()) {
    if (block.text === '')
      return constraint('', `system.${i + 1}.member.text`, 'have length greater than or equal to 1');
  }
  for (const [i, tool] of (request.toolConfig?.tools ?? []).entries()) {
    const refusal = toolNameRefusal(tool.toolSpec?.name ?? '', `toolConfig.tools.${i + 1}.member.toolSpec.name`);
    if (refusal) return refusal;
  }
  const chosen = request.toolConfig?.toolChoice?.tool?.name;
  return chosen === undefined ? null : toolNameRefusal(chosen, 'toolConfig.toolChoice.tool.name');
}

/** The model id, as the server's Region sees it. */
function modelRefusal(modelId: string, region: string): ConverseError | null {
  const { prefix, foundationModelId } = parseModelId(modelId);
  const model = bedrockModel(foundationModelId);
  if (!model) return invalid(INVALID_MODEL_ID);
  if (prefix === null) {
    const onDemand = model.inRegion === '*' || model.inRegion.includes(region);
    return onDemand
      ? null
      : invalid(
          `Invocation of model ID ${model.id} with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model.`,
        );
  }
  const callable =
    prefix === 'global'
      ? model.global && COMMERCIAL_REGIONS.includes(region)
      : model.geographies.includes(prefix) && GEOGRAPHY_REGIONS[prefix].includes(region);
  // A profile of another geography (`eu.` from us-east-1) does not exist in this Region.
  return callable ? null : invalid(INVALID_MODEL_ID);
}

function blankTextRefusal(request: ConverseRequest): ConverseError | null {
  for (const [i, message] of (request.messages ?? []).entries()) {
    for (const [j, block] of message.content.entries()) {
      if (block.text !== undefined && block.text.trim() === '') {
        return invalid(
          `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`,
        );
      }
    }
  }
  if ((request.system ?? []).some((s) => s.text !== undefined && s.text.trim() === '')) {
    return invalid(
      'The model returned the following errors: system: text content blocks must contain non-whitespace text',
    );
  }
  return null;
}

function modelRulesRefusal(request: ConverseRequest): ConverseError | null {
  const model = bedrockModel(parseModelId(request.modelId).foundationModelId);
  if (!model) return null;
  const { temperature, topP, maxTokens } = request.inferenceConfig ?? {};
  if (model.exclusiveSampling && temperature !== undefined && topP !== undefined) {
    return invalid(
      'The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one.',
    );
  }
  if (maxTokens !== undefined && maxTokens > model.maxOutputTokens) {
    const limit = model.maxOutputTokens;
    return invalid(
      `The maximum tokens you requested exceeds the model limit of ${limit}. Try again with a maximum tokens value that is lower than ${limit}.`,
    );
  }
  return null;
}

/** The structured output request: its shape, then whether the model serves it and accepts its schema. */
function outputConfigRefusal(request: ConverseRequest): ConverseError | null {
  const format = request.outputConfig?.textFormat;
  if (!format) return null;
  if (format.type !== 'json_schema')
    return constraint(String(format.type), 'outputConfig.textFormat.type', 'satisfy enum value set: [json_schema]');
  const text = format.structure?.jsonSchema?.schema;
  if (typeof text !== 'string')
    return constraint('null', 'outputConfig.textFormat.structure.jsonSchema.schema', 'not be null');
  const model = bedrockModel(parseModelId(request.modelId).foundationModelId);
  if (model && !model.structuredOutput) return invalid("This model doesn't support the textFormat field.");
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return invalid(
      'The model returned the following errors: output_config.format.schema: the schema is not valid JSON',
    );
  }
  const refused = structuredOutputSchemaRefusal(schema);
  return refused ? invalid(`The model returned the following errors: output_config.format.${refused}`) : null;
}

/** Why Bedrock in `region` would refuse this request, or null when it would answer it. */
export function refusalOf(request: ConverseRequest, region: string): ConverseError | null {
  const chosen = request.toolConfig?.toolChoice?.tool?.name;
  const tools = (request.toolConfig?.tools ?? []).map((t) => t.toolSpec?.name);
  return (
    shapeRefusal(request) ??
    modelRefusal(request.modelId, region) ??
    blankTextRefusal(request) ??
    (chosen !== undefined && !tools.includes(chosen)
      ? invalid(`toolChoice.tool.name '${chosen}' is not the name of a tool in toolConfig.tools.`)
      : null) ??
    modelRulesRefusal(request) ??
    outputConfigRefusal(request)
  );
}
