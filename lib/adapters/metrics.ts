import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/** Powertools Metrics (CloudWatch embedded metric format), one namespace for the service. */
export function createMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: 'ReflectiveMemory', serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceName });
}

export { MetricUnit };
