/**
 * Resolves the CloudFormation intrinsics of a synthesized template to the values they take
 * on the local harness, so the policies, environments and resource policies `cdk synth`
 * produces can be read as a deployment would see them: pseudo parameters, `Ref` and
 * `Fn::GetAtt` of the resources our stacks declare (physical names come from their
 * properties; queue URLs from the emulator), `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`, `Fn::FindInMap` and cross-stack `Fn::ImportValue`.
 *
 * Return values per resource type follow the CloudFormation resource reference (each
 * type's "Return values" section, e.g.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-sqs-queue.html:
 * `Ref` of a queue is its URL, `Fn::GetAtt … Arn` its ARN). An attribute of a resource type
 * we do not model resolves to a marker that matches no real name or ARN.
 */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
  Mappings?: Record<string, Record<string, Record<string, unknown>>>;
}

export interface LocalEnvironment {
  account: string;
  region: string;
  partition: string;
  /** The emulator's URL of a queue, by queue name. */
  queueUrl(name: string): string;
}

type Intrinsic = Record<string, unknown>;

export class TemplateResolver {
  constructor(
    private readonly template: CfnTemplate,
    private readonly env: LocalEnvironment,
    /** Resolves `Fn::ImportValue` (another stack's export). */
    private readonly importValue: (name: string) => unknown = (name) => {
      throw new Error(`no stack exports ${name}`);
    },
  ) {}

  /** `value` with every intrinsic function replaced by its local value. */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Intrinsic);
    const [fn, arg] = entries[0] ?? [];
    if (entries.length === 1 && fn !== undefined && (fn === 'Ref' || fn.startsWith('Fn::')))
      return this.intrinsic(fn, arg);
    return Object.fromEntries(entries.map(([k, v]) => [k, this.resolve(v)]));
  }

  /** The export of this template named `name`, resolved. */
  exported(name: string): unknown {
    const output = Object.values(this.template.Outputs ?? {}).find(
      (o) => o.Export && this.resolve(o.Export.Name) === name,
    );
    if (!output) throw new Error(`no export named ${name}`);
    return this.resolve(output.Value);
  }

  private intrinsic(fn: string, arg: unknown): unknown {
    const str = (v: unknown) => String(this.resolve(v));
    switch (fn) {
      case 'Ref':
        return this.ref(String(arg));
      case 'Fn::GetAtt': {
        const [id, attr] = Array.isArray(arg) ? arg.map(String) : String(arg).split('.');
        return this.getAtt(id ?? '', attr ?? '');
      }
      case 'Fn::Join': {
        const [sep, parts] = arg as [string, unknown[]];
        return (this.resolve(parts) as unknown[]).map(String).join(sep);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown];
        return (this.resolve(list) as unknown[])[Number(this.resolve(index))];
      }
      case 'Fn::Split': {
        const [sep, source] = arg as [string, unknown];
        return str(source).split(sep);
      }
      case 'Fn::Sub':
        return this.sub(arg);
      case 'Fn::FindInMap': {
        const [map, top, second] = (arg as unknown[]).map(str);
        const found = this.template.Mappings?.[map ?? '']?.[top ?? '']?.[second ?? ''];
        if (found === undefined) throw new Error(`Fn::FindInMap: no ${map}.${top}.${second}`);
        return found;
      }
      case 'Fn::ImportValue':
        return this.importValue(str(arg));
      default:
        throw new Error(`the local harness does not resolve ${fn}`);
    }
  }

  private sub(arg: unknown): string {
    const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
    return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
      if (name in vars) return String(this.resolve(vars[name]));
      const [id, attr] = name.split('.');
      return String(attr === undefined ? this.ref(id ?? '') : this.getAtt(id ?? '', attr));
    });
  }

  private resource(id: string): CfnResource {
    const r = this.template.Resources[id];
    if (!r) throw new Error(`the template has no resource ${id}`);
    return r;
  }

  private prop(id: string, name: string): string {
    const value = this.resource(id).Properties?.[name];
    return value === undefined ? `${id}` : String(this.resolve(value));
  }

  private ref(id: string): unknown {
    const { account, region, partition } = this.env;
    const pseudo: Record<string, string> = {
      'AWS::AccountId': account,
      'AWS::Region': region,
      'AWS::Partition': partition,
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::NoValue': '',
    };
    if (id in pseudo) return pseudo[id];
    const { Type } = this.resource(id);
    switch (Type) {
      case 'AWS::DynamoDB::Table':
        return this.prop(id, 'TableName');
      case 'AWS::S3::Bucket':
        return this.prop(id, 'BucketName');
      case 'AWS::SQS::Queue':
        return this.env.queueUrl(this.prop(id, 'QueueName'));
      case 'AWS::SNS::Topic':
        return `arn:${partition}:sns:${region}:${account}:${this.prop(id, 'TopicName')}`;
      case 'AWS::Lambda::Function':
        return this.prop(id, 'FunctionName');
      default:
        // Keys, roles, log groups…: a stable local name from the logical id.
        return id;
    }
  }

  private getAtt(id: string, attr: string): unknown {
    const { account, region, partition } = this.env;
    const { Type } = this.resource(id);
    const name = String(this.ref(id));
    const arns: Record<string, () => string> = {
      'AWS::DynamoDB::Table': () => `arn:${partition}:dynamodb:${region}:${account}:table/${name}`,
      'AWS::S3::Bucket': () => `arn:${partition}:s3:::${name}`,
      'AWS::SQS::Queue': () => `arn:${partition}:sqs:${region}:${account}:${this.prop(id, 'QueueName')}`,
      'AWS::KMS::Key': () => `arn:${partition}:kms:${region}:${account}:key/${id}`,
      'AWS::IAM::Role': () => `arn:${partition}:iam::${account}:role/${id}`,
      'AWS::Logs::LogGroup': () => `arn:${partition}:logs:${region}:${account}:log-group:${id}:*`,
      'AWS::Lambda::Function': () => `arn:${partition}:lambda:${region}:${account}:function:${name}`,
      'AWS::SNS::Topic': () => name,
    };
    if (attr === 'Arn' || (Type === 'AWS::SNS::Topic' && attr === 'TopicArn')) {
      const arn = arns[Type];
      if (arn) return arn();
    }
    if (Type === 'AWS::SQS::Queue' && attr === 'QueueName') return this.prop(id, 'QueueName');
    if (Type === 'AWS::SQS::Queue' && attr === 'QueueUrl') return name;
    return `unresolved:${id}.${attr}`;
  }
}
