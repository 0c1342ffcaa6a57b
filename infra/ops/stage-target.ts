/**
 * What an operator's command acts on: a deployed stage (`--stage NAME`, the caller's AWS
 * profile and Region; names from the stacks' outputs, as `npm run smoke` reads them) or the
 * running local harness (`--local`, `.local/stack.json` or `--state FILE`).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { stackNames, stackOutputs } from '../smoke/cloud-target.js';

export interface TargetOptions {
  stage?: string | undefined;
  local?: boolean | undefined;
  state?: string | undefined;
  region?: string | undefined;
}

/** Exactly one of --stage and --local. */
export const validTarget = (o: TargetOptions): boolean => (o.stage === undefined) === (o.local === true);

/** The stage's memory API and an administrator's bearer token (`--token`, or the variable `tokenVariable`; locally the stack's). */
export async function apiTarget(
  o: TargetOptions & { token?: string | undefined },
  tokenVariable: string,
): Promise<{ label: string; apiUrl: string; token: string }> {
  if (o.local) {
    const { readStackInfo } = await import('../local/stack-info.js');
    const info = readStackInfo(o.state);
    return { label: 'the local harness', apiUrl: info.apiUrl, token: info.adminToken };
  }
  const token = o.token ?? process.env[tokenVariable];
  if (!token)
    throw new Error(
      `give an administrator's token (a JWT of the stage's user pool, group memory-admin) with --token or ${tokenVariable}`,
    );
  const cfn = new CloudFormationClient(o.region ? { region: o.region } : {});
  const { ApiUrl } = await stackOutputs(cfn, stackNames(o.stage ?? '').stateless);
  cfn.destroy();
  if (!ApiUrl)
    throw new Error(
      `the stack ${stackNames(o.stage ?? '').stateless} has no ApiUrl output: deploy the current version`,
    );
  return { label: `stage ${o.stage}`, apiUrl: ApiUrl, token };
}

/** The stage's table, with the caller's credentials (a document client; `destroy` when done). */
export async function tableTarget(
  o: TargetOptions,
): Promise<{ label: string; ddb: DynamoDBDocumentClient; tableName: string; destroy(): void }> {
  let base: DynamoDBClient;
  let tableName: string;
  let label: string;
  if (o.local) {
    const { readStackInfo } = await import('../local/stack-info.js');
    const info = readStackInfo(o.state);
    base = new DynamoDBClient({
      region: info.region,
      credentials: info.credentials,
      endpoint: info.endpoints.dynamodb,
    });
    tableName = info.tableName;
    label = 'the local harness';
  } else {
    const config = o.region ? { region: o.region } : {};
    const cfn = new CloudFormationClient(config);
    const { TableName } = await stackOutputs(cfn, stackNames(o.stage ?? '').stateful);
    cfn.destroy();
    if (!TableName)
      throw new Error(
        `the stack ${stackNames(o.stage ?? '').stateful} has no TableName output: deploy the current version`,
      );
    base = new DynamoDBClient(config);
    tableName = TableName;
    label = `stage ${o.stage}`;
  }
  const ddb = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  return { label, ddb, tableName, destroy: () => base.destroy() };
}
