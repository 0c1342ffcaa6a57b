/** The sweep schedules: EventBridge rules onto the sweep function, their dead-letter queue and its alarm. */
import { Duration, type Stack } from 'aws-cdk-lib';
import { ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
import { SWEEPS } from '../resources.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import type { MemoryFunction } from './memory-function.js';
import { NotifyingAlarm } from './notifying-alarm.js';

/**
 * The nightly, weekly and expiry schedules onto the sweep function, with a dead-letter queue
 * for their target. EventBridge retries a failed delivery twice, for at most an hour (a sweep
 * an hour late is better looked at and run by hand than retried unseen), then puts the event
 * in the DLQ with RULE_ARN, TARGET_ARN, ERROR_CODE and ERROR_MESSAGE attributes.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html,
 * https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html
 *
 * That DLQ catches what EventBridge could not hand to Lambda (a missing permission, a deleted
 * function). EventBridge invokes the function asynchronously, so an error *inside* a sweep is
 * Lambda's to retry (twice) and is then dropped; the sweep function's Errors alarm reports it
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
 *
 * The queue: standard (EventBridge refuses a FIFO DLQ), its policy lets events.amazonaws.com
 * send only for these rules (aws:SourceArn; CDK's LambdaFunction target adds the statement, as
 * the EventBridge page above shows it), and it is encrypted with SQS-managed keys (SSE-SQS),
 * not the data key: with SSE-KMS, EventBridge could send only if the key policy named
 * events.amazonaws.com (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html#compatibility-with-aws-services),
 * which the stateful stack cannot write for rules of this stack without a cyclic reference,
 * nor at all for a key the stage brings. The queue holds schedule events (which sweep, which
 * time), no user memory.
 */
export function sweepSchedules(stack: Stack, props: StatelessStackProps, sweepFn: MemoryFunction): Queue {
  const dlq = new Queue(stack, 'SweepScheduleDlq', {
    queueName: `reflective-memory-${props.stage}-SweepScheduleDlq`,
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  NagSuppressions.addResourceSuppressions(dlq, [
    {
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself a dead-letter queue: the sweep schedules' EventBridge target DLQ (EventBridge's DeadLetterConfig, which cdk-nag does not see as a redrive policy). Its depth alarm notifies the stage's alarm topic.",
    },
  ]);
  for (const sweep of SWEEPS) {
    const name = sweep.charAt(0).toUpperCase() + sweep.slice(1);
    new Rule(stack, `${name}Schedule`, {
      description: `${sweep} sweep`,
      schedule: Schedule.expression(props.config.schedules[sweep]),
      targets: [
        new LambdaFunction(sweepFn, {
          // The schedule's own time travels with it: the sweep's "now" is never the wall clock.
          event: RuleTargetInput.fromObject({ sweep, time: EventField.time }),
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: dlq,
        }),
      ],
    });
  }
  new NotifyingAlarm(stack, 'SweepScheduleDlqDepthAlarm', {
    topic: props.alarmTopic,
    alarmDescription:
      'A scheduled sweep, or a batch inference job\'s end, could not be delivered to the sweep function. Action: read the message attributes (ERROR_CODE, ERROR_MESSAGE, RULE_ARN), fix the cause, then invoke the sweep function with the message body (the event), or for a schedule with {"sweep": "...", "time": "<the schedule time>"}.',
    metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return dlq;
}
