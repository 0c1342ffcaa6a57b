/**
 * A stand-in for the Bedrock Runtime client that records each Converse command it is sent and
 * answers with `text` or a tool call: what the adapter asked for, seen without a server.
 */
import type { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';

export type RecordedAnswer = { text?: string; toolUse?: { name: string; input: unknown } };

export function recordingClient(answer: RecordedAnswer) {
  const sent: ConverseCommand['input'][] = [];
  const client = {
    send: async (command: ConverseCommand) => {
      sent.push(command.input);
      return {
        output: {
          message: {
            role: 'assistant',
            content: [
              answer.toolUse ? { toolUse: { toolUseId: 't', ...answer.toolUse } } : { text: answer.text ?? '' },
            ],
          },
        },
        stopReason: answer.toolUse ? 'tool_use' : 'end_turn',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        metrics: { latencyMs: 1 },
      };
    },
    config: { region: async () => 'us-east-1' },
  } as unknown as BedrockRuntimeClient;
  return { client, sent };
}
