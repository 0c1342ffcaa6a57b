/**
 * Lambda's recursive loop detection, as the local event sources model it
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html). Lambda tracks a
 * chain of requests — the invocations caused by one triggering event — in the AWS X-Ray trace
 * header: a function invoked by an event gets it, a supported AWS SDK copies it onto what the
 * function sends (for SQS the message's `AWSTraceHeader` system attribute), and the header counts
 * how many times the event has invoked the function. Once a function has been invoked 16 times in
 * one chain, Lambda stops the next invocation unless the function's RecursiveLoop is Allow; for an
 * SQS source it sends the message to the dead-letter queue or on-failure destination if one is
 * configured (https://aws.amazon.com/about-aws/whats-new/2023/07/aws-lambda-detects-recursive-loops-lambda-functions/),
 * and notifies the account (AWS Health Dashboard, email).
 *
 * Locally the chain's counts ride in a message attribute (`TRACE_ATTRIBUTE`): the emulator keeps
 * no `AWSTraceHeader`. A function's SQS client adds it to what the function sends during an
 * invocation (`carryLineage`), and the event source hands it to the handler as the record's
 * `attributes.AWSTraceHeader`, as Lambda does, never as a message attribute. The header's form is
 * the local harness's own (AWS does not document how it encodes the count).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Invocations of one function in one chain that Lambda lets run; it stops the next. */
export const RECURSION_LIMIT = 16;

/** How many times the chain's triggering event has invoked each function, by function name. */
export type Lineage = Readonly<Record<string, number>>;

/** The message attribute that carries the trace header locally (the emulator drops `AWSTraceHeader`). */
export const TRACE_ATTRIBUTE = 'LocalAWSTraceHeader';

const invocation = new AsyncLocalStorage<Lineage>();

/** Runs a handler invocation in its chain: what it sends carries `lineage`. */
export function inChain<T>(lineage: Lineage, run: () => Promise<T>): Promise<T> {
  return invocation.run(lineage, run);
}

export function traceHeader(lineage: Lineage): string {
  const counts = Object.entries(lineage).map(([fn, n]) => `${fn}:${n}`);
  return `Root=local;Lineage=${counts.join(',')}`;
}

/** The counts of a trace header (none: a fresh chain, e.g. a message a client sent). */
export function parseTraceHeader(header: string | undefined): Lineage {
  const part = header?.split(';').find((p) => p.startsWith('Lineage='));
  if (!part) return {};
  const entries = part
    .slice('Lineage='.length)
    .split(',')
    .map((e) => [e.slice(0, e.lastIndexOf(':')), Number(e.slice(e.lastIndexOf(':') + 1))] as const)
    .filter(([fn, n]) => fn !== '' && Number.isInteger(n) && n > 0);
  return Object.fromEntries(entries);
}

/** The chain of a batch's invocation: each function's highest count among the records, `fn`'s being this invocation. */
export function invocationLineage(records: readonly Lineage[], fn: string): Lineage {
  const merged: Record<string, number> = {};
  for (const lineage of records)
    for (const [name, n] of Object.entries(lineage)) merged[name] = Math.max(merged[name] ?? 0, n);
  merged[fn] = Math.max(0, ...records.map((l) => l[fn] ?? 0)) + 1;
  return merged;
}

type Entry = { MessageAttributes?: Record<string, unknown> };
type Args = { input?: Entry & { Entries?: Entry[] } };
type Client = { middlewareStack: { add: (...args: never[]) => void } };

const withTrace = (entry: Entry, header: string): Entry => ({
  ...entry,
  MessageAttributes: { ...entry.MessageAttributes, [TRACE_ATTRIBUTE]: { DataType: 'String', StringValue: header } },
});

/** What the function's SQS client sends during an invocation carries the invocation's chain, as the AWS SDK does in Lambda. */
export function carryLineage<C extends Client>(client: C): C {
  const add = client.middlewareStack.add as unknown as (mw: unknown, options: { step: string; name: string }) => void;
  add(
    (next: (args: Args) => Promise<unknown>, context: { commandName?: string }) => async (args: Args) => {
      const lineage = invocation.getStore();
      if (!lineage || !args.input) return next(args);
      const header = traceHeader(lineage);
      if (context.commandName === 'SendMessageCommand') return next({ ...args, input: withTrace(args.input, header) });
      if (context.commandName === 'SendMessageBatchCommand')
        return next({
          ...args,
          input: { ...args.input, Entries: args.input.Entries?.map((e) => withTrace(e, header)) },
        });
      return next(args);
    },
    { step: 'initialize', name: 'carryLineage' },
  );
  return client;
}
