import { Alarm, type AlarmProps } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

export interface NotifyingAlarmProps extends AlarmProps {
  /** The stage's alarm topic (the stateful stack's `alarmTopic`). */
  topic: ITopic;
}

/**
 * Every alarm of the app: a CloudWatch alarm that notifies the stage's SNS topic when it goes
 * into ALARM and again when it returns to OK. The OK notification is what tells whoever was
 * told of the problem that it has cleared (a DLQ redriven, a backlog drained, throttling over)
 * without opening the console; it costs one more message per incident.
 *
 * CloudWatch publishes to the topic as the service principal `cloudwatch.amazonaws.com`; the
 * topic's policy and its KMS key's policy must let it (infra/stacks/stateful-stack.ts,
 * `alarmTopic`).
 */
export class NotifyingAlarm extends Alarm {
  constructor(scope: Construct, id: string, props: NotifyingAlarmProps) {
    const { topic, ...alarm } = props;
    super(scope, id, alarm);
    const action = new SnsAction(topic);
    this.addAlarmAction(action);
    this.addOkAction(action);
  }
}
