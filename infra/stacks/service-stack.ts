import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AuthorizationType,
  type CfnRestApi,
  EndpointAccessMode,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import { AlarmStatusWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type ApplicationLogLevel, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { ProbeSettings } from '#infra/config/deployment-config.ts';
import { apiAccessLogFormat } from '#infra/constructs/api-access-log.ts';
import { BatchSweep } from '#infra/constructs/batch-sweep.ts';
import { CallerRateLimitAcl } from '#infra/constructs/caller-rate-limit.ts';
import { requireConcurrencyBudget } from '#infra/constructs/concurrency-budget.ts';
import { CreditPoster } from '#infra/constructs/credit-poster.ts';
import { addHttpEdges } from '#infra/constructs/http-edges.ts';
import { LedgerAudit } from '#infra/constructs/ledger-audit.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { CREDIT_POSTER_SUBJECT, ServiceMonitoring } from '#infra/constructs/service-monitoring.ts';
import { SyntheticProbe } from '#infra/constructs/synthetic-probe.ts';
import { WebhookEvents } from '#infra/constructs/webhook-events.ts';
import { CREDIT_POSTER_NAME } from '#infra/credit-poster-settings.ts';
import {
  type AuthSettings,
  authorizerEnvironment,
  type CallerRateLimit,
  functionEnvironment,
  type ServiceSettings,
  walletEnvironment,
} from '#infra/environment.ts';
import { imagesBucketName } from '#infra/stacks/stateful-stack.ts';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { BINARY_MEDIA_TYPES } from '#shared/http/binary-media.ts';
import { gatewayResponses, gatewayResponseTemplate } from '#shared/http/gateway-responses.ts';
import { PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';
import { type OperationId, type Route, routeOf, routes, type TableName } from '#shared/routes.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { KMS_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';
import { WEBHOOK_SECRET_PURPOSE } from '#shared/webhooks/secrets/kms-key-wrapper.ts';

/**
 * TLS 1.3 preferred, TLS 1.2 the minimum, with post-quantum key exchange: an enhanced policy on the
 * API's own regional endpoint, so no custom domain is needed for it.
 */
export const API_SECURITY_POLICY = SecurityPolicy.TLS13_1_2_PQ_2025_09;

/** The route the synthetic probe reads with its own identity. */
export const PROBE_READ: OperationId = 'getBalance';

/** Properties of the {@link ServiceStack}. */
export interface ServiceStackProps extends StackProps {
  /** The tables of the stateful stack, by logical name. */
  readonly tables: Readonly<Record<TableName, ITable>>;
  /** The KMS key of the webhook signing secrets (stateful stack). */
  readonly webhookSecretsKey: IKey;
  /** The pets' images bucket (stateful stack). */
  readonly imagesBucket: IBucket;
  /** The identity provider the authorizer verifies tokens against. */
  readonly auth: AuthSettings;
  /** How long API Gateway reuses the authorizer's answer for the same token. */
  readonly authorizerCacheTtl: Duration;
  readonly settings: ServiceSettings;
  /** Stage-wide steady-state rate (requests per second) and burst. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  /** Retention of every log group of the stack: functions, access and execution logs. */
  readonly logRetention: RetentionDays;
  /** Application log level of every function. */
  readonly logLevel: ApplicationLogLevel;
  /** Where the alarms of the stage notify. */
  readonly alarmTopic: ITopic;
  /** The API Gateway stage, the first segment of every URL path. */
  readonly stageName: string;
  /** The WAF rate-based rule's limit per bearer token. */
  readonly callerRateLimit: CallerRateLimit;
  /** Whether the console's test-invoke (which skips the authorizer) may call the functions. */
  readonly allowTestInvoke: boolean;
  /** Reserved concurrency of each route function and the authorizer; none when `undefined`. */
  readonly reservedConcurrency: number | undefined;
  /** The account's concurrent executions quota, which every reservation of the stack must fit in. */
  readonly accountConcurrency: number;
  /** Whether this stack declares the account-wide API Gateway logging role (one stage per account does). */
  readonly declaresAccountLogRole: boolean;
  readonly probe: ProbeSettings;
  /** The ADOT Lambda layer every function of the stack runs under; none when `undefined`. */
  readonly adotLayerArn?: string | undefined;
}

/**
 * The stateless service: a regional REST API with a Lambda TOKEN authorizer and one function per
 * route of the route table, each granted exactly its route's actions on its route's table; the
 * WAF web ACL of the stage, the credit poster, the scheduled ledger audit and the synthetic probe;
 * and the alarms and dashboard that watch it.
 */
export class ServiceStack extends Stack {
  readonly api: RestApi;
  readonly authorizerFunction: ProjectFunction;
  /** The function of each route, by operationId. */
  readonly functions: ReadonlyMap<OperationId, ProjectFunction>;
  /** The API method of each route, by operationId. */
  readonly methods: ReadonlyMap<OperationId, Method>;
  /** One JSON line per request, written by API Gateway. */
  readonly accessLogs: LogGroup;
  /**
   * The group API Gateway writes execution logs (errors only) to. API Gateway would create it
   * itself on first use, without retention; created here first, it has one.
   */
  readonly executionLogs: LogGroup;
  readonly monitoring: ServiceMonitoring;
  readonly callerRateLimit: CallerRateLimitAcl;
  readonly probe: SyntheticProbe;
  /** The scheduled audit of the wallet ledger and its alarm. */
  readonly ledgerAudit: LedgerAudit;
  /** The wallets table's stream into the function that posts credits in transit to hot wallets. */
  readonly creditPoster: CreditPoster;
  /** The webhook events' deriver and dispatcher, with their alarms. */
  readonly webhookEvents: WebhookEvents;
  /** Completes the batches posted and not completed whose poster stopped. */
  readonly batchSweep: BatchSweep;
  /** The base URL of the API stage, as an output the pipeline's smoke test reads. */
  readonly apiUrlOutput: CfnOutput;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const tableNames = Object.fromEntries(
      Object.entries(props.tables).map(([name, table]) => [name, table.tableName]),
    ) as Record<TableName, string>;

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api = new RestApi(this, 'Api', {
      restApiName: id,
      description: 'Wallet and pet catalog API',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Image uploads reach their function byte for byte, and images go back as bytes (shared/http/binary-media.ts).
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      // API Gateway writes access and execution logs through one role per account and region:
      // declared by one stage only, or each deploy would point the account at its own role.
      // Retained, so deleting this stack cannot break logging of other APIs in the account.
      ...(props.declaresAccountLogRole
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
      deployOptions: {
        stageName: props.stageName,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apiAccessLogFormat(),
        // Errors only, and never request or response bodies: they carry tokens and money.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // Per-method ("detailed") metrics: the per-route latency alarms watch them.
        metricsEnabled: true,
        tracingEnabled: true,
        throttlingRateLimit: props.throttling.rateLimit,
        throttlingBurstLimit: props.throttling.burstLimit,
      },
    });
    const cfnApi = this.api.node.defaultChild as CfnRestApi;
    cfnApi.securityPolicy = API_SECURITY_POLICY;
    // STRICT: requests must arrive through a regional endpoint with a matching SNI host name.
    cfnApi.endpointAccessMode = EndpointAccessMode.STRICT;

    this.authorizerFunction = new ProjectFunction(this, 'Authorizer', {
      functionDir: 'authorizer',
      description: 'TOKEN authorizer: verifies the bearer JWT and answers with the routes its scopes open',
      environment: { ...authorizerEnvironment(props.auth), STAGE: props.stageName },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
      reservedConcurrency: props.reservedConcurrency,
    });
    const authorizer = new TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: this.authorizerFunction.function,
      identitySource: IdentitySource.header('Authorization'),
      validationRegex: BEARER_TOKEN_PATTERN,
      resultsCacheTtl: props.authorizerCacheTtl,
    });

    const functions = new Map<OperationId, ProjectFunction>();
    const methods = new Map<OperationId, Method>();
    const routeTable: readonly (Route & { operationId: OperationId })[] = routes;
    for (const route of routeTable) {
      const fn = new ProjectFunction(this, route.operationId, {
        functionDir: route.functionDir,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: {
          ...functionEnvironment(route, props.settings, tableNames, {
            images: props.imagesBucket.bucketName,
          }),
          STAGE: props.stageName,
        },
        logRetention: props.logRetention,
        applicationLogLevel: props.logLevel,
        reservedConcurrency:
          route.reservedConcurrency === 'unreserved' ? undefined : props.reservedConcurrency,
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
      });
      if (route.data) fn.grantData(props.tables[route.data.table], route.data.actions, route.data.indexes);
      if (route.images) {
        fn.grantImages(imagesBucketName(this, props.stageName), route.images.actions, buckets.images.prefix);
      }
      if (route.signingSecrets === 'seal') grantSealing(fn, props.webhookSecretsKey);
      const method = this.api.root.resourceForPath(route.path).addMethod(
        route.method,
        // Test-invoke runs a method without its authorizer: dev only.
        new LambdaIntegration(fn.function, { allowTestInvoke: props.allowTestInvoke }),
        route.scopes === null
          ? { operationName: route.operationId, authorizationType: AuthorizationType.NONE }
          : { operationName: route.operationId, authorizer },
      );
      if (route.scopes === null) {
        const reason = `${route.method} ${route.path} is public by design: the route table gives it no scopes, so it takes no token and must not demand one.`;
        Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
        Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
      } else {
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-COG4',
          reason:
            'Tokens are verified by the Lambda TOKEN authorizer, which accepts any OIDC provider (Cognito among them) and checks the route-table scopes; a Cognito user pool authorizer would tie the API to Cognito.',
        });
      }
      functions.set(route.operationId, fn);
      methods.set(route.operationId, method);
    }
    this.functions = functions;
    this.methods = methods;
    addHttpEdges(this.api, routeTable, props.settings.corsAllowedOrigins);

    for (const response of gatewayResponses) {
      this.api.addGatewayResponse(`GatewayResponse${response.type}`, {
        type: ResponseType.of(response.type),
        ...(response.status === undefined ? {} : { statusCode: String(response.status) }),
        responseHeaders: {
          'Content-Type': staticHeaderValue(PROBLEM_CONTENT_TYPE),
          ...Object.fromEntries(
            Object.entries(response.headers ?? {}).map(([name, value]) => [name, staticHeaderValue(value)]),
          ),
        },
        templates: { 'application/json': gatewayResponseTemplate(response) },
      });
    }

    this.executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${props.stageName}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Exists before the stage can log anything, or API Gateway creates it first and this one fails.
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    this.#acknowledgeApiFindings(props.declaresAccountLogRole);
    // RestApi adds an output of its own under a hashed name; this one's name is stable for scripts.
    this.api.node.tryRemoveChild('Endpoint');
    this.apiUrlOutput = new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the API stage; routes such as /api/v3/pet hang below it',
      value: this.api.url,
    });

    this.callerRateLimit = new CallerRateLimitAcl(this, 'CallerRateLimit', {
      stage: this.api.deploymentStage,
      stageName: props.stageName,
      limit: props.callerRateLimit,
    });
    this.probe = new SyntheticProbe(this, 'SyntheticProbe', {
      ...props.probe,
      apiUrl: this.api.url,
      scope: (routeOf(PROBE_READ).scopes ?? []).map((s) => `${props.auth.scopePrefix ?? ''}${s}`).join(' '),
      stageName: props.stageName,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
    });

    this.creditPoster = new CreditPoster(this, CREDIT_POSTER_NAME, {
      stageName: props.stageName,
      walletsTable: props.tables.wallets,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
    });

    this.webhookEvents = new WebhookEvents(this, 'WebhookEvents', {
      stageName: props.stageName,
      walletsTable: props.tables.wallets,
      webhooksTable: props.tables.webhooks,
      secretsKey: props.webhookSecretsKey,
      walletEnvironment: walletEnvironment(props.settings),
      alarmTopic: props.alarmTopic,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
    });

    this.batchSweep = new BatchSweep(this, 'BatchSweep', {
      stageName: props.stageName,
      walletsTable: props.tables.wallets,
      alarmTopic: props.alarmTopic,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
    });

    this.ledgerAudit = new LedgerAudit(this, 'LedgerAudit', {
      stageName: props.stageName,
      walletsTable: props.tables.wallets,
      alarmTopic: props.alarmTopic,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
    });
    requireConcurrencyBudget(this, props.accountConcurrency);
    this.monitoring = new ServiceMonitoring(this, 'Monitoring', {
      stageName: props.stageName,
      api: this.api,
      accessLogs: this.accessLogs,
      authorizer: this.authorizerFunction,
      functions: this.functions,
      methods: this.methods,
      tables: props.tables,
      alarmTopic: props.alarmTopic,
      creditPoster: this.creditPoster,
      workers: new Map([
        [CREDIT_POSTER_SUBJECT, this.creditPoster.function],
        ['probe', this.probe.function],
        ['webhookDeriver', this.webhookEvents.deriver],
        ['webhookDispatcher', this.webhookEvents.dispatcher],
        ['batchSweep', this.batchSweep.function],
        ['ledgerAudit', this.ledgerAudit.function],
        ['ledgerAuditSegment', this.ledgerAudit.segmentFunction],
      ]),
    });
    this.monitoring.dashboard.addWidgets(
      new AlarmStatusWidget({
        title: 'Ledger audit and batch sweep',
        alarms: [...this.ledgerAudit.alarms, this.batchSweep.alarm],
        width: 24,
      }),
      new AlarmStatusWidget({ title: 'Webhooks', alarms: this.webhookEvents.alarms, width: 24 }),
    );
    if (props.adotLayerArn !== undefined) this.#runUnderAdotLayer(props.adotLayerArn);
  }

  /** Every function of the stack, whichever construct made it, under the one ADOT layer. */
  #runUnderAdotLayer(layerVersionArn: string): void {
    const layer = LayerVersion.fromLayerVersionArn(this, 'AdotLayer', layerVersionArn);
    for (const construct of this.node.findAll()) {
      if (construct instanceof ProjectFunction) construct.runUnderAdotLayer(layer);
    }
  }

  #acknowledgeApiFindings(declaresAccountLogRole: boolean): void {
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Request bodies are validated in each function by validators generated from the same JSON Schemas as the OpenAPI document, which answer with problem+json listing every violation; API Gateway models would duplicate the schemas and answer in another format.',
    });
    // The id names the policy, so this covers the account logging role the API creates and nothing else.
    if (!declaresAccountLogRole) return;
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy API Gateway documents for its account-wide logging role; it only allows writing CloudWatch Logs.',
    });
  }
}

/**
 * A static header value as API Gateway takes it: single-quoted, or it would be read as a mapping
 * expression. Such literals have no escape for a quote of their own.
 */
function staticHeaderValue(value: string): string {
  if (value.includes("'")) throw new Error(`A gateway response header value cannot contain "'": ${value}`);
  return `'${value}'`;
}

/**
 * A function that seals webhook signing secrets: it may ask KMS for data keys under the secrets'
 * key, for that purpose only (the encryption context the keeper sends), and nothing else: it can
 * seal a secret and never open one (kms:Decrypt stays with the dispatcher).
 */
function grantSealing(fn: ProjectFunction, key: IKey): void {
  fn.function.addEnvironment(KMS_KEY_ENV, key.keyArn);
  Grant.addToPrincipal({
    grantee: fn.function,
    actions: ['kms:GenerateDataKey'],
    resourceArns: [key.keyArn],
    conditions: { StringEquals: { 'kms:EncryptionContext:purpose': WEBHOOK_SECRET_PURPOSE } },
  });
}
