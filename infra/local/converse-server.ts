/**
 * A local endpoint that speaks Bedrock Runtime's Converse protocol
 * (POST /model/{modelId}/converse), over HTTP/2 cleartext like the SDK's default
 * handler (prior knowledge, no TLS), so the same BedrockRuntimeClient code runs locally
 * with only an endpoint override. By default it answers with the offline model.
 *
 * It is as strict as Bedrock in its Region: a request Bedrock would refuse (an unknown model,
 * a profile of another geography, a bare id that needs a profile, blank text, a bad tool name,
 * a toolChoice naming no tool, temperature with topP, maxTokens over the model's limit) gets
 * Bedrock's error (infra/local/converse-validation.ts) and never reaches the responder.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { nightlyOffline, OFFLINE_MODEL_LABEL, reflectOffline, summarizeOffline, weeklyOffline } from '../../lib/offline-model/rule-reflector.js';
import type { ConverseError, ConverseRequest, Responder } from './converse-protocol.js';
import { refusalOf } from './converse-validation.js';
import { estimateInputTokens, estimateOutputTokens } from './token-estimate.js';

export type { ConverseReply, ConverseRequest, Responder } from './converse-protocol.js';

/** The local stack's Region (infra/local/emulators.ts LOCAL_REGION). */
const DEFAULT_REGION = 'us-east-1';

const promptOf = (req: ConverseRequest) => (req.messages ?? []).flatMap((m) => m.content.map((c) => c.text ?? '')).join('\n');

/**
 * The offline model as a Converse responder: with a tool, the reflection of the prompt's
 * turns; without one, a summary of the turns in the system text (seed 003).
 */
export const offlineResponder: Responder = (req) => {
  const started = Date.now();
  const prompt = promptOf(req);
  const system = (req.system ?? []).map((s) => s.text ?? '').join('\n');
  const toolName = req.toolConfig?.tools?.[0]?.toolSpec?.name;
  const output =
    toolName === 'record_nightly_findings'
      ? nightlyOffline(prompt)
      : toolName === 'record_weekly_reflection'
        ? weeklyOffline(prompt)
        : toolName
          ? reflectOffline(prompt)
          : summarizeOffline(system);
  const content = toolName ? [{ toolUse: { toolUseId: 'offline-1', name: toolName, input: output } }] : [{ text: String(output) }];
  // As Bedrock would bill the request: tool schemas and the tool-use system prompt included (token-estimate.ts).
  const inputTokens = estimateInputTokens(req);
  const outputTokens = estimateOutputTokens(output);
  return {
    body: {
      output: { message: { role: 'assistant', content } },
      stopReason: toolName ? 'tool_use' : 'end_turn',
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
  setResponder(responder: Responder): void;
  close(): Promise<void>;
}

export async function startConverseServer(options: { port?: number; responder?: Responder; region?: string } = {}): Promise<ConverseServer> {
  let responder = options.responder ?? offlineResponder;
  const region = options.region ?? DEFAULT_REGION;
  const requests: ConverseRequest[] = [];
  const refusals: ConverseServer['refusals'] = [];
  const server = http2.createServer();
  server.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      const match = /^\/model\/([^/]+)\/converse$/.exec(req.url?.split('?')[0] ?? '');
      if (req.method !== 'POST' || !match?.[1]) {
        return send(404, { message: `no route for ${req.method} ${req.url}` }, { 'x-amzn-errortype': 'ResourceNotFoundException' });
      }
      let body: Omit<ConverseRequest, 'modelId'>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return send(400, { message: 'request body is not JSON' }, { 'x-amzn-errortype': 'ValidationException' });
      }
      const request: ConverseRequest = { ...body, modelId: decodeURIComponent(match[1]) };
      requests.push(request);
      const refusal = refusalOf(request, region);
      if (refusal) {
        refusals.push({ request, error: refusal });
        return send(refusal.status, { message: refusal.message }, { 'x-amzn-errortype': refusal.errorType });
      }
      try {
        const reply = await responder(request);
        if ('hang' in reply) return; // the client's timeout fires
        if ('status' in reply) return send(reply.status, { message: reply.message }, { 'x-amzn-errortype': reply.errorType });
        return send(200, reply.body);
      } catch (error) {
        return send(500, { message: String(error) }, { 'x-amzn-errortype': 'InternalServerException' });
      }
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
    region,
    requests,
    refusals,
    setResponder: (r) => {
      responder = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}
