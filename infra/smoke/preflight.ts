/**
 * The smoke run's pre-flight: before anything is published, each model the stage invokes
 * (batches, and any model the stage config names for summaries, sleep-time runs or
 * embeddings) must
 * - answer one tiny call (Converse; InvokeModel for the embedding model) with the caller's
 *   credentials. Access to Bedrock's serverless models "is enabled by default with the correct
 *   AWS Marketplace permissions": the first call to a third-party model in the account starts
 *   its Marketplace subscription with the caller's permissions (aws-marketplace:Subscribe,
 *   aws-marketplace:Unsubscribe, aws-marketplace:ViewSubscriptions), Anthropic models need a
 *   one-time use-case form ("first time use"), and a missing prerequisite answers
 *   AccessDeniedException, also for up to 2 minutes after it is fixed
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html). The console's
 *   "Model access" page is retired: models are opened from the Model catalog;
 * - be Active: GetFoundationModel's `modelDetails.modelLifecycle.status` is ACTIVE or LEGACY
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetFoundationModel.html,
 *   API_FoundationModelLifecycle.html); a Legacy model is closed to new customers, existing
 *   ones may lose it when idle, and it reaches end of life
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html).
 * The caller needs bedrock:InvokeModel on the model (Converse is authorized by it:
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html) and
 * bedrock:GetFoundationModel. Each failed check says exactly what to do.
 */
import { GetFoundationModelCommand } from '@aws-sdk/client-bedrock';
import { ConverseCommand, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import type { ModelAccess, SmokeCheck, StageModel } from './target.js';

const MODEL_ACCESS_DOC = 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html';
const MODEL_CARDS = 'https://docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html';
const STAGE_MODELS = "the stage's modelId / jobModels / embeddings in infra/config/stages.ts";

/**
 * The foundation model behind an invoked id: an inference profile id is the foundation model
 * id after a geography prefix (`us.`, `eu.`, `apac.`, `jp.`, `au.`, `ca.`, `us-gov.`, `global.`:
 * https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html).
 */
export function foundationModelIdOf(modelId: string): string {
  return /^(?:us|us-gov|eu|apac|jp|au|ca|global)\.([a-z0-9-]+\..+)$/.exec(modelId)?.[1] ?? modelId;
}

const describe = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;

/** What to do about a refused call, from Bedrock's error. */
export function accessAdvice(error: unknown, model: StageModel, region: string): string {
  const { name, message } = error as Error;
  const foundation = foundationModelIdOf(model.modelId);
  const anthropic = foundation.startsWith('anthropic.');
  const marketplace = `run this pre-flight (or open the model from the Model catalog of the Bedrock console in ${region}) as a principal allowed aws-marketplace:Subscribe, aws-marketplace:Unsubscribe and aws-marketplace:ViewSubscriptions: its first call subscribes the account (${MODEL_ACCESS_DOC}); after a grant, allow up to 2 minutes`;
  const form =
    "submit the Anthropic use-case form once for the account (or the organization's management account): open an Anthropic model from the Model catalog of the Bedrock console and fill in the use-case details";
  const active = `pick a model that is Active and offered in ${region} from the model cards (${MODEL_CARDS}) and set it in ${STAGE_MODELS}`;
  if (name === 'AccessDeniedException') {
    if (/not authorized to perform: bedrock:/i.test(message))
      return `your credentials may not invoke ${model.modelId}: allow bedrock:InvokeModel on it for the caller (the stage's own roles get theirs from infra/stacks/reflector-model.ts)`;
    if (/marketplace/i.test(message)) return marketplace;
    if (/use case|use-case|first.time/i.test(message)) return form;
    return [marketplace, anthropic ? form : '', `a Legacy model is closed to new customers: ${active}`]
      .filter(Boolean)
      .join('; ');
  }
  if (name === 'ResourceNotFoundException')
    return `the model is not served (end of life, or not in ${region}): ${active}`;
  if (name === 'ValidationException')
    return `Bedrock in ${region} does not take this model id (a profile of another geography, or a bare id that needs a profile): check inferenceScope and ${STAGE_MODELS}`;
  return 'Bedrock did not answer (throttling or an outage): run the smoke again in a minute';
}

/** One tiny call the model must answer. */
async function answers(access: ModelAccess, model: StageModel): Promise<void> {
  if (model.api === 'embedding') {
    await access.runtime.send(
      new InvokeModelCommand({
        modelId: model.modelId,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify({ inputText: 'smoke pre-flight', dimensions: 256 }),
      }),
    );
    return;
  }
  await access.runtime.send(
    new ConverseCommand({
      modelId: model.modelId,
      messages: [{ role: 'user', content: [{ text: 'Answer with one word: ready?' }] }],
      inferenceConfig: { maxTokens: 8 },
    }),
  );
}

/** The model's lifecycle status, or the error that kept GetFoundationModel from saying. */
async function lifecycle(
  access: ModelAccess,
  foundationModelId: string,
): Promise<{ status: string } | { error: unknown }> {
  try {
    const res = await access.control.send(new GetFoundationModelCommand({ modelIdentifier: foundationModelId }));
    return { status: res.modelDetails?.modelLifecycle?.status ?? 'unknown' };
  } catch (error) {
    return { error };
  }
}

/** The pre-flight check of one model: it answered, and it is Active. */
export async function modelCheck(access: ModelAccess, model: StageModel): Promise<SmokeCheck> {
  const foundation = foundationModelIdOf(model.modelId);
  const id = `model${model.jobs[0]?.replace(/^./, (c) => c.toUpperCase()) ?? ''}`;
  const title = `model ${model.modelId} (${model.jobs.join(', ')}) answers and is Active`;
  const called = await answers(access, model).then(
    () => null,
    (error: unknown) => error,
  );
  const state = await lifecycle(access, foundation);
  const causes: string[] = [];
  const todo: string[] = [];
  if (called) {
    causes.push(`the ${model.api === 'embedding' ? 'InvokeModel' : 'Converse'} call was refused: ${describe(called)}`);
    todo.push(accessAdvice(called, model, access.region));
  }
  if ('error' in state) {
    causes.push(`GetFoundationModel(${foundation}) failed: ${describe(state.error)}`);
    todo.push(
      (state.error as Error).name === 'AccessDeniedException'
        ? 'allow bedrock:GetFoundationModel for the caller'
        : accessAdvice(state.error, model, access.region),
    );
  } else if (state.status !== 'ACTIVE') {
    causes.push(`GetFoundationModel says ${foundation} is ${state.status}`);
    todo.push(
      `a Legacy model is closed to new customers and reaches end of life (https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html): pick an Active model from the model cards (${MODEL_CARDS}) offered in ${access.region} and set it in ${STAGE_MODELS}`,
    );
  }
  if (causes.length === 0)
    return { id, title, ok: true, detail: `answered one call; ${foundation} is ACTIVE in ${access.region}` };
  return {
    id,
    title,
    ok: false,
    detail: `${model.modelId} cannot be used by the stage`,
    cause: causes.join('; '),
    lookAt: [...new Set(todo)].join('; '),
  };
}

/** The checks of every model of the stage, one per distinct model id. */
export async function preflight(access: ModelAccess): Promise<SmokeCheck[]> {
  const checks: SmokeCheck[] = [];
  for (const model of access.models) checks.push(await modelCheck(access, model));
  return checks;
}

/** The stage's models from the ids its functions invoke, one entry per distinct id. */
export function stageModels(ids: {
  batches: string;
  summaries?: string | undefined;
  sleepTime?: string | undefined;
  embeddings?: string | undefined;
}): StageModel[] {
  const models = new Map<string, StageModel>();
  for (const [job, modelId] of Object.entries(ids)) {
    if (!modelId) continue;
    const api = job === 'embeddings' ? 'embedding' : 'converse';
    const known = models.get(`${api}:${modelId}`);
    if (known) known.jobs.push(job);
    else models.set(`${api}:${modelId}`, { modelId, jobs: [job], api });
  }
  return [...models.values()];
}
