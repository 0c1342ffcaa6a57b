/**
 * A local stand-in for Lambda's SQS event source mapping: polls a queue, invokes the
 * very same handler with a Lambda-shaped SQS event, deletes what succeeded and leaves
 * batchItemFailures (or everything, if the handler threw) to come back after the
 * visibility timeout — and, past maxReceiveCount, to the emulator's redrive to the DLQ.
 *
 * Concurrent, as Lambda runs it: `concurrency` pollers each receive a batch and invoke the
 * handler, so several batches of one queue are in flight at once. Lambda starts an SQS
 * event source with five concurrent batches and scales up from there, bounded by the
 * mapping's maximum concurrency; on a FIFO queue it never has two batches of one message
 * group in flight, so order holds within a group while different groups run in parallel
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html). Locally the FIFO rule is the
 * emulator's: it hands out no message of a group that has one in flight.
 *
 * In AWS a batch never reappears while its invocation runs: the queue's visibility timeout is
 * at least six times the function's timeout, and Lambda ends an invocation at its timeout
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html). Locally the
 * visibility timeouts are seconds (so that a failed record comes back quickly) and nothing
 * ends a slow handler, so the event source keeps a running batch invisible itself
 * (`keepInvisible`): it receives the batch invisible for the function's timeout, as long as
 * Lambda could run it, and on failure makes the failed records visible again after the
 * queue's local timeout — but those whose visibility the function set itself (a model retry
 * brought forward: `functionSetVisibility`). Without it, a handler slowed by injected faults
 * saw its own records delivered again to another poller while it still ran — two invocations
 * of one FIFO group at once, which Lambda never has. Renewing the visibility while the
 * handler ran (every half timeout) was not enough: the emulator runs in this process, and
 * under load its event loop stalled 1.3–2.0 s (measured in three conv-30 replays with faults
 * run at once, load 6–10 on 2 cores) — over half the turn queue's 2 s; after a stall the
 * emulator expires the batch before the late renewal reaches it, and in one of those replays
 * a turn was delivered again while its first invocation still ran.
 *
 * The function's timeout is enforced as Lambda enforces it: an invocation still running at
 * `timeoutSeconds` has failed (its whole batch comes back, counted in `stats.timeouts`), and the
 * context's `getRemainingTimeInMillis()` counts down to that same moment (lambda-context.ts).
 * Lambda stops the invocation there (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html);
 * locally its promise runs on unawaited, as nothing can stop it.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { withDelivery } from './fault-injection.js';
import { lambdaContext } from './lambda-context.js';
import { inChain, invocationLineage, parseTraceHeader, RECURSION_LIMIT, TRACE_ATTRIBUTE } from './recursive-loop.js';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

/** One handler invocation, for benchmarks (duration is what Lambda would bill, before rounding). */
export interface Invocation {
  /** The function's key: signal, reflector, idle, sweep or api. */
  fn: string;
  ms: number;
  /** The SQS records of the event (none for sweeps and API requests). */
  records: readonly SQSRecord[];
  /** Epoch ms when the handler returned. */
  finishedAt: number;
  /**
   * The process's CPU time (user + system) while the handler ran, in ms (API requests only).
   * Only the handler's when nothing else runs in the process meanwhile (one request at a time).
   */
  cpuMs?: number;
}

export type InvocationObserver = (invocation: Invocation) => void;

export interface EventSourceStats {
  invocations: number;
  records: number;
  failedRecords: number;
  handlerErrors: number;
  /** Invocations that died part-way (injected faults). */
  died: number;
  /** Records Lambda's recursive loop detection stopped (recursive-loop.ts). */
  recursionStopped: number;
  /** The most times one chain invoked the function. */
  longestChain: number;
  /** Invocations still running at the function's timeout (failed, as Lambda fails them). */
  timeouts: number;
}

/** What an invocation that ran past its function's timeout fails with. */
export class LambdaTimeoutError extends Error {
  override readonly name = 'LambdaTimeout';
}

/** `work`, or a LambdaTimeoutError once `seconds` have passed. */
async function withinTimeout<T>(seconds: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LambdaTimeoutError(`Task timed out after ${seconds} seconds`)), seconds * 1000);
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lambda's starting number of concurrent batches for an SQS event source without a maximum. */
export const DEFAULT_SQS_CONCURRENCY = 5;

export class LocalEventSource {
  readonly stats: EventSourceStats = {
    invocations: 0,
    records: 0,
    failedRecords: 0,
    handlerErrors: 0,
    died: 0,
    timeouts: 0,
    recursionStopped: 0,
    longestChain: 0,
  };
  private running = false;
  private loops: Array<Promise<void>> = [];
  private inFlight = 0;

  constructor(
    private readonly options: {
      name: string;
      sqs: SQSClient;
      queueUrl: string;
      queueArn: string;
      region: string;
      handler: SqsHandler;
      batchSize?: number;
      /** Batches in flight at once (the mapping's maximum concurrency). @default DEFAULT_SQS_CONCURRENCY */
      concurrency?: number;
      functionName: string;
      timeoutSeconds: number;
      onError?: (error: unknown) => void;
      /** Told of every invocation once the handler has returned (or thrown). */
      observe?: InvocationObserver;
      /** The function's key for `observe`. @default name */
      fn?: string;
      /**
       * Receive batches invisible for the function's timeout (`timeoutSeconds`); failed records
       * come back `seconds` after the invocation, set through this client (the local harness's own,
       * not the function's: Lambda makes no such call, its timeouts make it needless), but those
       * whose visibility the function set itself (`functionSetVisibility`, by receipt handle).
       */
      keepInvisible?: { sqs: SQSClient; seconds: number; functionSetVisibility?: (receiptHandle: string) => boolean };
      /**
       * The function's RecursiveLoop setting, as its synthesized template says (none: Lambda's
       * default, Terminate), and where a record the detection stops goes: the queue's DLQ, sent
       * with `sqs` (Lambda's doing, not the function's). Without `stopped`, nothing is stopped.
       */
      recursion?: { loop?: string; stopped: { sqs: SQSClient; deadLetterQueueUrl?: string } };
      /** Receive nothing while this says so (asked before each receive; a test hook of the local harness). */
      holdWhile?: () => Promise<boolean>;
    },
  ) {}

  get busy(): boolean {
    return this.inFlight > 0;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const pollers = Math.max(1, this.options.concurrency ?? DEFAULT_SQS_CONCURRENCY);
    this.loops = Array.from({ length: pollers }, () => this.run());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async run(): Promise<void> {
    const { sqs, queueUrl } = this.options;
    while (this.running) {
      let messages: Message[] = [];
      try {
        if (await this.options.holdWhile?.()) {
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        const res = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: this.options.batchSize ?? 10,
            WaitTimeSeconds: 1,
            ...(this.options.keepInvisible ? { VisibilityTimeout: this.options.timeoutSeconds } : {}),
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        messages = res.Messages ?? [];
      } catch (error) {
        if (!this.running) return;
        this.options.onError?.(error);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (messages.length === 0) continue;
      this.inFlight += 1;
      try {
        await this.invoke(messages);
      } finally {
        this.inFlight -= 1;
      }
    }
  }

  private async invoke(received: Message[]): Promise<void> {
    const messages = await this.stopRecursion(received);
    if (messages.length === 0) return;
    const records = messages.map((m) => this.toRecord(m));
    const lineage = invocationLineage(
      records.map((r) => parseTraceHeader(r.attributes.AWSTraceHeader)),
      this.options.functionName,
    );
    this.stats.longestChain = Math.max(this.stats.longestChain, lineage[this.options.functionName] ?? 0);
    this.stats.invocations += 1;
    this.stats.records += records.length;
    let failed: Set<string>;
    const started = performance.now();
    const fn = this.options.fn ?? this.options.name;
    // Injected faults (when the local harness turns them on) strike first deliveries only.
    const firstDelivery = records.some((r) => r.attributes.ApproximateReceiveCount === '1');
    const { functionName, timeoutSeconds } = this.options;
    const outcome = await withDelivery(firstDelivery, () =>
      withinTimeout(
        timeoutSeconds,
        inChain(lineage, () => this.options.handler({ Records: records }, lambdaContext(functionName, timeoutSeconds))),
      ),
    );
    if (!outcome.ok && outcome.error instanceof LambdaTimeoutError) this.stats.timeouts += 1;
    if (outcome.died || !outcome.ok) {
      // A crash (or an injected death): Lambda returns the whole batch to the queue.
      this.stats.handlerErrors += 1;
      if (outcome.died) this.stats.died += 1;
      this.options.onError?.(
        outcome.died || outcome.ok
          ? new Error(`${fn} died mid-batch (injected fault); the batch goes back to the queue`)
          : outcome.error,
      );
      failed = new Set(records.map((r) => r.messageId));
    } else {
      failed = new Set((outcome.result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      // Like Lambda: an identifier that is not in the batch fails the whole batch.
      if ([...failed].some((id) => !records.some((r) => r.messageId === id)))
        failed = new Set(records.map((r) => r.messageId));
    }
    this.options.observe?.({
      fn: this.options.fn ?? this.options.name,
      ms: performance.now() - started,
      records,
      finishedAt: Date.now(),
    });
    this.stats.failedRecords += failed.size;
    const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
    await this.comeBackSoon(messages.filter((m) => failed.has(m.MessageId ?? '')));
    if (done.length > 0) {
      await this.options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
    }
  }

  /**
   * Lambda's recursive loop detection (recursive-loop.ts): a record whose chain has invoked the
   * function RECURSION_LIMIT times already is not handed to it — unless its RecursiveLoop is
   * Allow — but sent to the queue's DLQ (dropped without one) and deleted, with a warning in
   * place of Lambda's notification. Returns the records to invoke the function with.
   */
  private async stopRecursion(messages: Message[]): Promise<Message[]> {
    const recursion = this.options.recursion;
    if (!recursion || recursion.loop === 'Allow') return messages;
    const fn = this.options.functionName;
    const count = (m: Message) => parseTraceHeader(m.MessageAttributes?.[TRACE_ATTRIBUTE]?.StringValue)[fn] ?? 0;
    const stopped = messages.filter((m) => count(m) >= RECURSION_LIMIT);
    if (stopped.length === 0) return messages;
    const { sqs, deadLetterQueueUrl } = recursion.stopped;
    for (const m of stopped) {
      this.stats.recursionStopped += 1;
      console.warn(
        JSON.stringify({
          level: 'WARN',
          message: `Lambda stopped a recursive invocation: the function was invoked ${RECURSION_LIMIT} times in this chain of requests and its RecursiveLoop is not Allow`,
          function: fn,
          queue: this.options.queueArn,
          messageId: m.MessageId,
          invocations: count(m),
          sentTo: deadLetterQueueUrl ?? 'dropped (no dead-letter queue)',
        }),
      );
      if (deadLetterQueueUrl)
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: deadLetterQueueUrl,
            MessageBody: m.Body ?? '',
            ...(m.MessageAttributes ? { MessageAttributes: m.MessageAttributes } : {}),
            ...fifoFields(m),
          }),
        );
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.options.queueUrl,
        Entries: stopped.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
    return messages.filter((m) => !stopped.includes(m));
  }

  /** Failed records visible again after the queue's local timeout (see the module's comment), but those the function set itself. */
  private async comeBackSoon(failed: readonly Message[]): Promise<void> {
    const keep = this.options.keepInvisible;
    const mine = failed.filter((m) => !keep?.functionSetVisibility?.(m.ReceiptHandle ?? ''));
    if (!keep || mine.length === 0) return;
    await keep.sqs
      .send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: mine.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle ?? '',
            VisibilityTimeout: keep.seconds,
          })),
        }),
      )
      .catch((error: unknown) => this.options.onError?.(error));
  }

  private toRecord(m: Message): SQSRecord {
    const a = m.Attributes ?? {};
    const trace = m.MessageAttributes?.[TRACE_ATTRIBUTE]?.StringValue;
    return {
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
        SentTimestamp: a.SentTimestamp ?? String(Date.now()),
        SenderId: a.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
        ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
        ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
        ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
        ...(trace ? { AWSTraceHeader: trace } : {}),
      },
      messageAttributes: Object.fromEntries(
        Object.entries(m.MessageAttributes ?? {})
          .filter(([k]) => k !== TRACE_ATTRIBUTE)
          .map(([k, v]) => [
            k,
            {
              dataType: v.DataType ?? 'String',
              ...(v.StringValue !== undefined ? { stringValue: v.StringValue } : {}),
              stringListValues: [],
              binaryListValues: [],
            },
          ]),
      ),
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.options.queueArn,
      awsRegion: this.options.region,
    };
  }
}

/** A FIFO message's group and deduplication id, for sending it on to its (FIFO) dead-letter queue. */
function fifoFields(m: Message): { MessageGroupId?: string; MessageDeduplicationId?: string } {
  const a = m.Attributes ?? {};
  return a.MessageGroupId
    ? { MessageGroupId: a.MessageGroupId, MessageDeduplicationId: a.MessageDeduplicationId ?? m.MessageId ?? '' }
    : {};
}
