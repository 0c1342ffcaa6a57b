/**
 * The local stand-in for Bedrock's control plane GetFoundationModel
 * (GET /foundation-models/{modelIdentifier},
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetFoundationModel.html), served
 * by the Converse stand-in (converse-server.ts) so that the smoke pre-flight
 * (infra/smoke/preflight.ts) runs the same code locally as against AWS. It answers for the
 * models of lib/model/bedrock-models.ts and the embedding stand-in's by their foundation model id, `modelLifecycle.status`
 * ACTIVE (the valid values are ACTIVE and LEGACY:
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_FoundationModelLifecycle.html)
 * unless a test set another; any other id gets ResourceNotFoundException (HTTP 404), one of
 * the operation's documented errors. Test hooks: `setLifecycle` and `refuse`.
 */
import { bedrockModel } from '../../lib/model/bedrock-models.js';
import type { ConverseError } from './converse-protocol.js';
import { STAND_IN_EMBEDDING_MODEL } from './embedding-stand-in.js';

export type LifecycleStatus = 'ACTIVE' | 'LEGACY';

export interface FoundationModelCatalogue {
  /** A model's lifecycle status from now on (a test of a Legacy model). */
  setLifecycle(foundationModelId: string, status: LifecycleStatus): void;
  /** Answer every GetFoundationModel with this error (e.g. the caller lacks bedrock:GetFoundationModel); null restores answers. */
  refuse(error: ConverseError | null): void;
  /** Every model id asked for. */
  readonly requests: string[];
  /** GetFoundationModel's answer: status and body. */
  answer(modelIdentifier: string, region: string): { status: number; body: unknown; errorType?: string };
}

export function foundationModelCatalogue(): FoundationModelCatalogue {
  const lifecycle = new Map<string, LifecycleStatus>();
  const requests: string[] = [];
  let refusal: ConverseError | null = null;
  return {
    requests,
    setLifecycle: (id, status) => lifecycle.set(id, status),
    refuse: (error) => {
      refusal = error;
    },
    answer(modelIdentifier, region) {
      requests.push(modelIdentifier);
      if (refusal) return { status: refusal.status, body: { message: refusal.message }, errorType: refusal.errorType };
      const model =
        bedrockModel(modelIdentifier) ??
        (modelIdentifier === STAND_IN_EMBEDDING_MODEL
          ? { id: modelIdentifier, name: 'Titan Text Embeddings V2', inRegion: '*' as const }
          : undefined);
      if (!model)
        return {
          status: 404,
          body: { message: `The model ${modelIdentifier} was not found.` },
          errorType: 'ResourceNotFoundException',
        };
      return {
        status: 200,
        body: {
          modelDetails: {
            modelArn: `arn:aws:bedrock:${region}::foundation-model/${model.id}`,
            modelId: model.id,
            modelName: model.name,
            providerName: model.id.split('.')[0],
            inputModalities: ['TEXT'],
            outputModalities: ['TEXT'],
            responseStreamingSupported: true,
            inferenceTypesSupported:
              model.inRegion === '*' || model.inRegion.includes(region) ? ['ON_DEMAND'] : ['INFERENCE_PROFILE'],
            modelLifecycle: { status: lifecycle.get(model.id) ?? 'ACTIVE' },
          },
        },
      };
    },
  };
}
