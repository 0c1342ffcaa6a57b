/**
 * A local endpoint that speaks Bedrock Runtime's Converse protocol
 * (POST /model/{modelId}/converse), over HTTP/2 cleartext like the SDK's default
 * handler (prior knowledge, no TLS), so the same BedrockRuntimeClient code runs locally
 * with only an endpoint override. By default it answers with the offline model.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { nightlyOffline, OFFLINE_MODEL_LABEL, reflectOffline, summarizeOffline, weeklyOffline } from '../../lib/offline-model/rule-reflector.js';

export interface ConverseRequest {
  modelId: string;
  system?: Array<{ text?: string }>;
  messages?: Array<{ role: string; content: Array<{ text?: string }> }>;
  inferenceConfig?: { temperature?: number; maxTokens?: number };
  toolConfig?: { tools?: Array<{ toolSpec?: { name?: string } }>; toolChoice?: unknown };
}

/** A scripted reply: a Converse response body, or an error as Bedrock sends it. */
export type ConverseReply = { body: Record<string, unknown> } | { status: number; errorType: string; message: string } | { hang: true };

export type Responder = (request: ConverseRequest) => ConverseReply | Promise<ConverseReply>;

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
  const inputTokens = Math.ceil((prompt.length + system.length) / 4);
  const outputTokens = Math.ceil((typeof output === 'string' ? output : JSON.stringify(output)).length / 4);
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
  requests: ConverseRequest[];
  setResponder(responder: Responder): void;
  close(): Promise<void>;
}

export async function startConverseServer(options: { port?: number; responder?: Responder } = {}): Promise<ConverseServer> {
  let responder = options.responder ?? offlineResponder;
  const requests: ConverseRequest[] = [];
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
    requests,
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
