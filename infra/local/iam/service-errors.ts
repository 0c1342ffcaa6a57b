/**
 * The errors AWS answers a denied request with, per service: the same error name, fault
 * and HTTP status the SDK would raise in Lambda, so handlers meet what they would meet
 * there. The message follows IAM's "User: … is not authorized to perform: … on resource: …"
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html).
 * Error names and statuses:
 * - DynamoDB: AccessDeniedException, 400
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html);
 * - S3: AccessDenied, 403 (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html);
 * - SQS: the SDK names SQS errors after their query-compatible code (x-amzn-query-error):
 *   `AccessDenied` for an IAM denial, as AWS's own troubleshooting page shows it
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/troubleshooting-access-denied.html;
 *   its HTTP status is not documented for the JSON protocol: 403 is assumed), and
 *   `KMS.AccessDeniedException`, 400, when SQS may not use the queue's key for the caller
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html, Errors);
 * - DynamoDB's answer when its KMS call on the caller's behalf is denied is not documented;
 *   it is reported as an AccessDeniedException (400) naming the KMS key
 *   (https://github.com/aws/aws-cdk/issues/10010 shows one);
 * - Bedrock Runtime: AccessDeniedException, 403
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
 */
import { BedrockServiceException } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeServiceException } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import type { IamRequest } from './authorization-requests.js';

const metadata = (httpStatusCode: number) => ({ httpStatusCode, attempts: 1, totalRetryDelay: 0 });

export function accessDenied(service: string, principal: string, request: IamRequest): Error {
  const message = `User: ${principal} is not authorized to perform: ${request.action} on resource: ${request.resource} because no identity-based policy allows the ${request.action} action (local IAM check)`;
  const viaKms = request.action.startsWith('kms:');
  switch (service) {
    case 'DynamoDB':
      return new DynamoDBServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: metadata(400),
        message,
      });
    case 'S3':
      return new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: metadata(403), message });
    case 'SQS':
      return viaKms
        ? new SQSServiceException({
            name: 'KMS.AccessDeniedException',
            $fault: 'client',
            $metadata: metadata(400),
            message,
          })
        : new SQSServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: metadata(403), message });
    case 'BedrockRuntime':
      return new BedrockRuntimeServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: metadata(403),
        message,
      });
    case 'Bedrock':
      // CreateModelInvocationJob: AccessDeniedException, HTTP 403
      // (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html, "Errors").
      return new BedrockServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: metadata(403),
        message,
      });
    default:
      return Object.assign(new Error(message), { name: 'AccessDenied' });
  }
}

/** What S3 answers a GET/HEAD of a missing key when the caller may not list the bucket. */
export function missingKeyDenied(operation: string, principal: string, key: string): Error {
  // HEAD responses have no body: the SDK names the error after the status (Forbidden).
  const name = operation === 'HeadObject' ? 'Forbidden' : 'AccessDenied';
  return new S3ServiceException({
    name,
    $fault: 'client',
    $metadata: metadata(403),
    message: `Access Denied (${key} does not exist, and ${principal} may not s3:ListBucket; local IAM check)`,
  });
}
