/**
 * A local endpoint that speaks Bedrock Runtime's Converse protocol
 * (POST /model/{modelId}/converse), InvokeModel for the embedding stand-in
 * (POST /model/{modelId}/invoke, embedding-stand-in.ts) and the control plane's
 * GetFoundationModel (GET /foundation-models/{modelId}, foundation-models.ts), over HTTP/2 cleartext like the SDK's default
 * handler (prior knowledge, no TLS), so the same BedrockRuntimeClient code runs locally
 * with only an endpoint override. By default it answers with the offline model.
 *
 * It is as strict as Bedrock in its Region: a request Bedrock would refuse (an unknown model,
 * a profile of another geography, a bare id that needs a profile, blank text, a bad tool name,
 * a toolChoice naming no tool, temperature with topP, maxTokens over the model's limit, a
 * structured output schema the model does not serve or whose JSON Schema it refuses) gets
 * Bedrock's error (infra/local/converse-validation.ts) and never reaches the responder.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { OFFLINE_MODEL_LABEL, reflectOffline, summarizeOffline } from '../../lib/offline-model/rule-reflector.js';
import { nightlyOffline, weeklyOffline } from '../../lib/offline-model/rule-sleep-time.js';
import { answerNameOf, type ConverseError, type ConverseRequest, type Responder } from './converse-protocol.js';
import { refusalOf } from './converse-validation.js';
import {
  type Embedder,
  type EmbeddingInvocation,
  embeddingAnswer,
  embeddingRefusal,
  standInVector,
} from './embedding-stand-in.js';
import { type FoundationModelCatalogue, foundationModelCatalogue } from './foundation-models.js';
import { estimateInputTokens, estimateOutputTokens } from './token-estimate.js';

export { answerNameOf } from './converse-protocol.js';
export type { ConverseReply, ConverseRequest, Responder } from './converse-protocol.js';

/** The local harness's Region (infra/local/emulators.ts LOCAL_REGION). */
const DEFAULT_REGION = 'us-east-1';

const promptOf = (req: ConverseRequest) =>
  (req.messages ?? []).flatMap((m) => m.content.map((c) => c.text ?? '')).join('\n');

/**
 * The offline model as a Converse responder: asked for a structured answer (a forced tool,
 * structured output, or an answer type in the system prompt), the reflection of the prompt's
 * turns, as the tool's input or as JSON text; otherwise a summary of the turns in the system
 * text (req R-SUM).
 */
export const offlineResponder: Responder = (req) => {
  const started = Date.now();
  const prompt = promptOf(req);
  const system = (req.system ?? []).map((s) => s.text ?? '').join('\n');
  const name = answerNameOf(req);
  const output =
    name === 'record_nightly_findings'
      ? nightlyOffline(prompt)
      : name === 'record_weekly_reflection'
        ? weeklyOffline(prompt)
        : name
          ? reflectOffline(prompt)
          : summarizeOffline(system);
  const tool = name !== undefined && req.toolConfig !== undefined;
  const content = tool
    ? [{ toolUse: { toolUseId: 'offline-1', name, input: output } }]
    : [{ text: typeof output === 'string' ? output : JSON.stringify(output) }];
  // As Bedrock would bill the request: tool schemas and the tool-use system prompt, or the structured output schema and its prompt, included (token-estimate.ts).
  const inputTokens = estimateInputTokens(req);
  const outputTokens = estimateOutputTokens(output);
  return {
    body: {
      output: { message: { role: 'assistant', content } },
      stopReason: tool ? 'tool_use' : 'end_turn',
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: Date.now() - started },
      additionalModelResponseFields: { model: OFFLINE_MODEL_LABEL },
    },
  };
};

export interface ConverseServer {
  url: string;
  port: number;
  /** The Region whose Bedrock it stands in for. */
  region: string;
  /** Every request received, refused ones included. */
  requests: ConverseRequest[];
  /** The requests refused as Bedrock would refuse them, with the error sent. */
  refusals: Array<{ request: ConverseRequest; error: ConverseError }>;
  /** Every InvokeModel request (the Titan Text Embeddings V2 stand-in, embedding-stand-in.ts), refused ones included. */
  invocations: EmbeddingInvocation[];
  /** The stand-in's vectors: hashed words (standInVector) unless a test gives its own; null restores the default; 'hang' never answers (the client's timeout or abort fires). */
  setEmbedder(embedder: Embedder | 'hang' | null): void;
  setResponder(responder: Responder): void;
  /** GetFoundationModel of the control plane (foundation-models.ts), for the smoke pre-flight: lifecycle and refusal hooks. */
  catalogue: FoundationModelCatalogue;
  close(): Promise<void>;
}

/** An HTTP answer: status, JSON body and extra headers (Bedrock names its errors in `x-amzn-errortype`). */
interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const bedrockError = (status: number, message: string, errorType: string): Answer => ({
  status,
  body: { message },
  headers: { 'x-amzn-errortype': errorType },
});

/** What the server keeps between requests: the log of requests and refusals, and the current responder. */
interface ServerState {
  region: string;
  requests: ConverseRequest[];
  refusals: ConverseServer['refusals'];
  invocations: EmbeddingInvocation[];
  embedder: Embedder | 'hang';
  responder: Responder;
  catalogue: FoundationModelCatalogue;
}

/** InvokeModel of the embedding stand-in: Titan V2's refusals, else its answer (null: it hangs). */
function invoke(state: ServerState, modelId: string, raw: string): Answer | null {
  let body: unknown;
  try {
    body = JSON.parse(raw || '{}');
  } catch {
    return bedrockError(400, 'request body is not JSON', 'ValidationException');
  }
  state.invocations.push({ modelId, body: body as Record<string, unknown> });
  const refusal = embeddingRefusal(modelId, body);
  if (refusal) return bedrockError(refusal.status, refusal.message, refusal.errorType);
  if (state.embedder === 'hang') return null;
  return { status: 200, body: embeddingAnswer(body as Record<string, unknown>, state.embedder) };
}

/**
 * One request, as Bedrock's Converse route would answer it: 404 off the route, 400 for a body
 * that is not JSON, Bedrock's refusals (refusalOf), then the responder's reply; null when the
 * responder hangs (the client's timeout fires).
 */
async function answer(
  state: ServerState,
  method: string | undefined,
  url: string | undefined,
  raw: string,
): Promise<Answer | null> {
  // Model ids arrive URL-encoded (`amazon.titan-embed-text-v2%3A0`).
  const described = /^\/foundation-models\/([^/]+)$/.exec(url?.split('?')[0] ?? '');
  if (method === 'GET' && described?.[1]) {
    const a = state.catalogue.answer(decodeURIComponent(described[1]), state.region);
    return a.errorType
      ? { status: a.status, body: a.body, headers: { 'x-amzn-errortype': a.errorType } }
      : { status: a.status, body: a.body };
  }
  const invoked = /^\/model\/([^/]+)\/invoke$/.exec(url?.split('?')[0] ?? '');
  if (method === 'POST' && invoked?.[1]) return invoke(state, decodeURIComponent(invoked[1]), raw);
  const match = /^\/model\/([^/]+)\/converse$/.exec(url?.split('?')[0] ?? '');
  if (method !== 'POST' || !match?.[1])
    return bedrockError(404, `no route for ${method} ${url}`, 'ResourceNotFoundException');
  let body: Omit<ConverseRequest, 'modelId'>;
  try {
    body = JSON.parse(raw || '{}');
  } catch {
    return bedrockError(400, 'request body is not JSON', 'ValidationException');
  }
  const request: ConverseRequest = { ...body, modelId: decodeURIComponent(match[1]) };
  state.requests.push(request);
  const refusal = refusalOf(request, state.region);
  if (refusal) {
    state.refusals.push({ request, error: refusal });
    return bedrockError(refusal.status, refusal.message, refusal.errorType);
  }
  try {
    const reply = await state.responder(request);
    if ('hang' in reply) return null;
    if ('status' in reply) return bedrockError(reply.status, reply.message, reply.errorType);
    return { status: 200, body: reply.body };
  } catch (error) {
    return bedrockError(500, String(error), 'InternalServerException');
  }
}

export async function startConverseServer(
  options: { port?: number; responder?: Responder; region?: string } = {},
): Promise<ConverseServer> {
  const state: ServerState = {
    region: options.region ?? DEFAULT_REGION,
    requests: [],
    refusals: [],
    invocations: [],
    embedder: standInVector,
    responder: options.responder ?? offlineResponder,
    catalogue: foundationModelCatalogue(),
  };
  const server = http2.createServer();
  server.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const a = await answer(state, req.method, req.url, Buffer.concat(chunks).toString('utf8'));
      if (!a) return;
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    region: state.region,
    requests: state.requests,
    refusals: state.refusals,
    invocations: state.invocations,
    setEmbedder: (e) => {
      state.embedder = e ?? standInVector;
    },
    setResponder: (r) => {
      state.responder = r;
    },
    catalogue: state.catalogue,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}
