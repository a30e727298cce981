import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  Architecture,
  type ILayerVersion,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundlingOptions, LOCK_FILE, PROJECT_ROOT } from '#infra/bundling.ts';

/** Properties of a {@link ProjectFunction}. */
export interface ProjectFunctionProps {
  /** Folder under `functions/` whose `handler.ts` exports `handler`. */
  readonly functionDir: string;
  /**
   * A fixed physical name, for a function something outside its stack must name before it exists
   * (the pipeline's grant to invoke the probe).
   * @default a name CloudFormation generates
   */
  readonly functionName?: string;
  readonly description?: string;
  readonly environment?: Readonly<Record<string, string>>;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * Lambda drops application log lines below this level; the function sees it as
   * `AWS_LAMBDA_LOG_LEVEL`. Keep it at INFO or below: Lambda counts the metric lines, which have no
   * `level`, as INFO.
   * @default ApplicationLogLevel.INFO
   */
  readonly applicationLogLevel?: ApplicationLogLevel;
  /**
   * What happens to the log group when the function goes. Destroyed by default: the function is
   * stateless, and the retention already bounds how long its logs matter.
   * @default RemovalPolicy.DESTROY
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * Concurrency reserved for (and the most allowed to) this function: one route cannot starve the
   * others, nor another stage in the account (docs/decisions/concurrency-and-timeouts.md).
   * @default none: the function shares the account's unreserved pool
   */
  readonly reservedConcurrency?: number | undefined;
  /**
   * For a function no API request waits on (the scheduled ledger audit).
   * @default ProjectFunction.TIMEOUT
   */
  readonly timeout?: Duration;
  /**
   * For a function whose memory grows with the data it holds, not with a request (the ledger
   * audit's reducer, which holds a tally per account).
   * @default ProjectFunction.MEMORY_MB
   */
  readonly memorySize?: number;
}

/**
 * A Lambda function of this project, configured the one way every function is: Node.js 24 on
 * Graviton, the shared esbuild bundling, JSON logs into its own log group with a retention, and
 * active X-Ray tracing. Data access is granted separately, through {@link grantData}.
 */
export class ProjectFunction extends Construct {
  /**
   * 1024 MB: Lambda allots CPU in proportion to memory (one full vCPU at 1,769 MB), and what these
   * functions spend time on is CPU-bound: loading the bundle at cold start (sizes: BENCHMARKS.md), TLS handshakes,
   * JWT signature checks. The duration saved pays for much of the larger size; measure before
   * going lower.
   */
  static readonly MEMORY_MB = 1024;

  /**
   * Under API Gateway's 29 s integration limit with room to spare, so a slow dependency ends in
   * the function's own problem+json error rather than the gateway's bare 504
   * (docs/decisions/concurrency-and-timeouts.md).
   */
  static readonly TIMEOUT = Duration.seconds(10);

  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  #dataGrant: Grant | undefined;
  #imagesGrant: Grant | undefined;

  constructor(scope: Construct, id: string, props: ProjectFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.DESTROY,
    });
    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, 'functions', props.functionDir, 'handler.ts'),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: LOCK_FILE,
      bundling: bundlingOptions,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? ProjectFunction.MEMORY_MB,
      timeout: props.timeout ?? ProjectFunction.TIMEOUT,
      tracing: Tracing.ACTIVE,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: props.applicationLogLevel ?? ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      logGroup: this.logGroup,
      ...(props.functionName === undefined ? {} : { functionName: props.functionName }),
      ...(props.description === undefined ? {} : { description: props.description }),
      // Stack traces through the bundle's linked source map (infra/bundling.ts), so a logged error names its .ts line.
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
    });
    this.#acknowledgeExecutionRoleFindings();
  }

  /**
   * Runs the function under the ADOT Node.js layer (the optimised `AWSOpenTelemetryDistroJs`
   * family): Lambda starts it through the layer's wrapper, which registers the OpenTelemetry SDK
   * (ESM handlers included, through Node's module hooks) before the handler loads; the handler
   * sees the wrapper's path and traces DynamoDB with OpenTelemetry spans instead of X-Ray
   * subsegments (shared/observability/tracing.ts).
   */
  runUnderAdotLayer(layer: ILayerVersion): void {
    this.function.addLayers(layer);
    this.function.addEnvironment('AWS_LAMBDA_EXEC_WRAPPER', ProjectFunction.ADOT_EXEC_WRAPPER);
  }

  /** The ADOT layers' wrapper script, which `tracingFromEnvironment` recognises. */
  static readonly ADOT_EXEC_WRAPPER = '/opt/otel-instrument';

  /**
   * Grants the function the given DynamoDB actions on the table and nothing else: the one grant of
   * the one table its route names. A second call is refused, because a function touching two
   * tables would contradict the route table.
   */
  grantData(table: ITable, actions: readonly string[], queriedIndexes: readonly string[] = []): Grant {
    if (this.#dataGrant) throw new Error(`${this.node.path} already has its data grant`);
    if (actions.length === 0) throw new Error(`${this.node.path}: a data grant needs at least one action`);
    // Not table.grant(): on a table with indexes it adds `<table>/index/*` to every grant. Only a
    // function that queries gets the indexes, and only those named.
    const queries = actions.includes('dynamodb:Query');
    this.#dataGrant = Grant.addToPrincipal({
      grantee: this.function,
      actions: [...actions],
      resourceArns: [
        table.tableArn,
        ...(queries ? queriedIndexes.map((index) => `${table.tableArn}/index/${index}`) : []),
      ],
    });
    return this.#dataGrant;
  }

  /**
   * Grants the function the given S3 actions on the objects under `prefix` of the bucket named
   * `bucketName` and nothing else (no other prefix), `s3:ListBucket` on the bucket itself when it
   * is one of them (see `Route.images`): the images grant its route names.
   * A second call is refused, as for {@link grantData}. The ARN is made in the function's own stack
   * from the bucket's fixed name (`imagesBucketName`), so that the acknowledged finding on its
   * wildcard reads the same before synthesis and after. Answers the grant on the objects; the
   * listing's, when made, stays with the role.
   */
  grantImages(bucketName: string, actions: readonly string[], prefix: string): Grant {
    if (this.#imagesGrant) throw new Error(`${this.node.path} already has its images grant`);
    if (actions.length === 0) throw new Error(`${this.node.path}: an images grant needs at least one action`);
    const stack = Stack.of(this);
    const objects = stack.formatArn({
      service: 's3',
      region: '',
      account: '',
      resource: bucketName,
      resourceName: `${prefix}*`,
    });
    const onBucket = actions.filter((action) => action === 's3:ListBucket');
    const onObjects = actions.filter((action) => action !== 's3:ListBucket');
    if (onObjects.length === 0)
      throw new Error(`${this.node.path}: an images grant needs an action on objects`);
    this.#imagesGrant = Grant.addToPrincipal({
      grantee: this.function,
      actions: onObjects,
      resourceArns: [objects],
    });
    if (onBucket.length > 0) {
      const bucket = stack.formatArn({ service: 's3', region: '', account: '', resource: bucketName });
      Grant.addToPrincipal({ grantee: this.function, actions: onBucket, resourceArns: [bucket] });
    }
    const role = this.function.role;
    if (role) {
      // As cdk-nag renders the ARN: pseudo parameters unless the stack's env is explicit.
      const pseudo = (text: string, value: string, name: string) =>
        Token.isUnresolved(value) ? text.replace(value, `<AWS::${name}>`) : text;
      const name = pseudo(pseudo(bucketName, stack.account, 'AccountId'), stack.region, 'Region');
      const partition = Token.isUnresolved(stack.partition) ? '<AWS::Partition>' : stack.partition;
      const rendered = `arn:${partition}:s3:::${name}/${prefix}*`;
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${rendered}]`,
        reason:
          'Image keys are drawn per upload (pets/<petId>/<imageId>), so the grant names the one prefix the service writes under: objects below it only, never another prefix.',
      });
    }
    return this.#imagesGrant;
  }

  /** The findings every function's generated execution role raises, each with why it stands. */
  #acknowledgeExecutionRoleFindings(): void {
    const role = this.function.role;
    if (!role) return;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        'AWSLambdaBasicExecutionRole only allows writing to CloudWatch Logs; the function logs to its own log group, and a hand-written copy of this AWS-maintained policy would add nothing but upkeep.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions, so their resource must be "*".',
    });
  }
}
