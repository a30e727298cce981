import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp, type ServiceApp } from '#infra/app.ts';
import { readConfig } from '#infra/config/deployment-config.ts';
import type { ProjectFunction } from '#infra/constructs/project-function.ts';
import { defaultServiceSettings } from '#infra/environment.ts';
import { BEARER_TOKEN_PATTERN } from '#shared/auth/bearer.ts';
import { createTableInput, tables } from '#shared/dynamodb/tables.ts';

const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) =>
  String(a.AttributeName).localeCompare(String(b.AttributeName));

import { gatewayResponses, gatewayResponseTemplate } from '#shared/http/gateway-responses.ts';
import { type OperationId, type Route, routes, type TableName } from '#shared/routes.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };
import { buildServiceApp, type Json, logicalId, synthesize, testContext } from '../support/cdk.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const routeTable: readonly (Route & { operationId: OperationId })[] = routes;
const actionsOf = (statement: Statement) => [statement.Action].flat().sort();

let built: ServiceApp;
let service: Template;
let stateful: Template;

beforeAll(() => {
  ({ built, service, stateful } = synthesize());
});

/** The properties of the synthesized Lambda function of a ProjectFunction. */
function functionProps(fn: ProjectFunction): Json {
  const resource = service.toJSON().Resources[logicalId(built.service, fn.function)];
  return resource.Properties;
}

/** Every policy statement attached to the function's role, whatever policy resource holds it. */
function statementsOf(fn: ProjectFunction): Statement[] {
  const role = fn.function.role;
  if (!role) throw new Error(`${fn.node.path} has no role`);
  const roleRef = { Ref: logicalId(built.service, role) };
  return Object.values(service.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([roleRef]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/**
 * How the service template refers to an attribute of a table: a cross-stack reference whose name
 * embeds the table's logical id (`...FnGetAtt<id>Arn...`, `...Ref<id>...`), whichever reference
 * mechanism the feature flags choose.
 */
function tableReference(table: TableName, attribute: 'Arn' | 'Ref'): RegExp {
  const id = logicalId(built.stateful, built.stateful.tables[table]);
  return new RegExp(attribute === 'Arn' ? `FnGetAtt${id}Arn` : `Ref${id}`);
}

function routeFunction(operationId: OperationId): ProjectFunction {
  const fn = built.service.functions.get(operationId);
  if (!fn) throw new Error(`No function for ${operationId}`);
  return fn;
}

describe('API methods and authorization', () => {
  const methods = () => {
    const byRoute = new Map<string, Json>();
    for (const method of built.service.api.methods) {
      const resource = service.toJSON().Resources[logicalId(built.service, method)];
      byRoute.set(`${method.httpMethod} ${method.resource.path}`, resource.Properties);
    }
    return byRoute;
  };

  it('has exactly one function-backed method per route of the route table', () => {
    const backed = [...methods()].filter(([, props]) => (props.Integration as Json).Type === 'AWS_PROXY');
    expect(backed.map(([key]) => key).sort()).toEqual(routeTable.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('puts the TOKEN authorizer on every route with scopes, and no authorizer on public ones', () => {
    const [authorizerId] = Object.keys(service.findResources('AWS::ApiGateway::Authorizer'));
    for (const route of routeTable) {
      const method = methods().get(`${route.method} ${route.path}`);
      if (route.scopes === null) {
        expect(method, route.operationId).toMatchObject({ AuthorizationType: 'NONE' });
        expect(method, route.operationId).not.toHaveProperty('AuthorizerId');
      } else {
        expect(method, route.operationId).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
        });
      }
    }
    // Concrete facts, so a wrong route table fails here too.
    expect(methods().get('GET /api/openapi.json')).toMatchObject({ AuthorizationType: 'NONE' });
    expect(methods().get('POST /api/wallet/send')).toMatchObject({ AuthorizationType: 'CUSTOM' });
    expect(methods().get('POST /api/v3/pet')).toMatchObject({ AuthorizationType: 'CUSTOM' });
  });

  it("integrates each method as a Lambda proxy with its own route's function", () => {
    for (const route of routeTable) {
      const fnId = logicalId(built.service, routeFunction(route.operationId).function);
      expect(methods().get(`${route.method} ${route.path}`), route.operationId).toMatchObject({
        OperationName: route.operationId,
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(JSON.stringify(methods().get(`${route.method} ${route.path}`)?.Integration)).toContain(fnId);
    }
  });

  it('configures a cached TOKEN authorizer on the Authorization header with a Bearer validation regex', () => {
    service.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    service.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 300,
      IdentityValidationExpression: BEARER_TOKEN_PATTERN,
    });
  });

  it('lets well-formed Bearer headers through the validation regex and stops the rest', () => {
    const regex = new RegExp(BEARER_TOKEN_PATTERN);
    expect(regex.test('Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl')).toBe(true);
    expect(regex.test('bearer abc-_~+/.def==')).toBe(true);
    expect(regex.test('Basic dXNlcjpwYXNz')).toBe(false);
    expect(regex.test('Bearer')).toBe(false);
    expect(regex.test('Bearer a b')).toBe(false);
    expect(regex.test('Bearer a"b')).toBe(false);
  });

  it('gives the authorizer the identity provider settings of the context', () => {
    expect(functionProps(built.service.authorizerFunction)).toMatchObject({
      Environment: {
        Variables: {
          AUTH_ISSUER: cdkJson.context['auth:issuer'],
          AUTH_AUDIENCE: cdkJson.context['auth:audience'],
          AUTH_JWKS_URL: cdkJson.context['auth:jwksUrl'],
        },
      },
    });
  });
});

describe('functions', () => {
  const all = () => [built.service.authorizerFunction, ...built.service.functions.values()];

  // Their timeouts: test/infra/service-posture.test.ts ("capacity").
  it('runs every function on Node.js 24, arm64, 1024 MB, with active tracing and JSON logs at the stage log level', () => {
    expect(all()).toHaveLength(routeTable.length + 1);
    for (const fn of all()) {
      const props = functionProps(fn);
      expect(props, fn.node.path).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 1024,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: {
          LogFormat: 'JSON',
          // stages.dev sets DEBUG; the default is INFO.
          ApplicationLogLevel: 'DEBUG',
          SystemLogLevel: 'WARN',
          LogGroup: { Ref: logicalId(built.service, fn.logGroup) },
        },
      });
    }
  });

  it('gives every function its own log group with the retention of the context', () => {
    for (const fn of all()) {
      expect(service.toJSON().Resources[logicalId(built.service, fn.logGroup)], fn.node.path).toMatchObject({
        // stages.dev sets 14 days; the default is 30.
        Properties: { RetentionInDays: 14 },
        DeletionPolicy: 'Delete',
      });
    }
  });

  it("gives each function its route's table name and, for the wallet, the money settings", () => {
    for (const route of routeTable) {
      const variables = (functionProps(routeFunction(route.operationId)).Environment as Json | undefined)
        ?.Variables as Json | undefined;
      // Every function names its stage, so that the metrics of stages sharing an account never mix.
      expect(variables?.STAGE, route.operationId).toBe('dev');
      // Stack traces through the bundle's source map.
      expect(variables?.NODE_OPTIONS, route.operationId).toBe('--enable-source-maps');
      const table = route.data?.table;
      // The images bucket's name, to the image functions only (test/infra/images-bucket.test.ts).
      expect(Object.hasOwn(variables ?? {}, 'IMAGES_BUCKET'), route.operationId).toBe(
        route.images !== undefined,
      );
      if (!table) {
        expect(Object.keys(variables ?? {}).sort(), route.operationId).toEqual(
          ['NODE_OPTIONS', 'STAGE', ...(route.images ? ['IMAGES_BUCKET'] : [])].sort(),
        );
        continue;
      }
      const envVar = tables[table].envVar;
      expect(JSON.stringify(variables?.[envVar]), route.operationId).toMatch(tableReference(table, 'Ref'));
      const other = table === 'pets' ? 'wallets' : 'pets';
      expect(variables, route.operationId).not.toHaveProperty(tables[other].envVar);
    }
    const send = functionProps(routeFunction('sendMoney')).Environment as { Variables: Json };
    expect(send.Variables).toMatchObject({
      CURRENCY: 'USD',
      CURRENCY_DECIMALS: '2',
      MAX_TRANSFER_MINOR: '100000000',
      IDEMPOTENCY_TTL_SECONDS: '86400',
    });
    expect(JSON.stringify(send.Variables.WALLETS_TABLE_NAME)).toMatch(tableReference('wallets', 'Ref'));
    const addPet = functionProps(routeFunction('addPet')).Environment as { Variables: Json };
    expect(Object.keys(addPet.Variables).sort()).toEqual(['NODE_OPTIONS', 'PETS_TABLE_NAME', 'STAGE']);
    // A registration's Idempotency-Key is kept as long as a transfer's; no money settings besides.
    const createWebhook = functionProps(routeFunction('createWebhook')).Environment as { Variables: Json };
    expect(createWebhook.Variables.IDEMPOTENCY_TTL_SECONDS).toBe('86400');
    expect(createWebhook.Variables).not.toHaveProperty('CURRENCY');
  });
});

describe('data access', () => {
  const xray = {
    Effect: 'Allow',
    Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
    Resource: '*',
  };

  it('grants each function exactly its route-table actions on exactly its table, besides X-Ray', () => {
    for (const route of routeTable) {
      const statements = statementsOf(routeFunction(route.operationId));
      const data = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      const keys = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
      // The images grant, checked in test/infra/images-bucket.test.ts.
      const images = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
      // One statement on the objects, and one on the bucket where the route lists it.
      const imageGrants = route.images ? (route.images.actions.includes('s3:ListBucket') ? 2 : 1) : 0;
      expect(images.length, route.operationId).toBe(imageGrants);
      expect(
        statements.filter((s) => !data.includes(s) && !keys.includes(s) && !images.includes(s)),
        route.operationId,
      ).toEqual([xray]);
      // Only a function that seals webhook signing secrets may use their key: data keys, for that purpose.
      expect(
        keys.map((s) => [actionsOf(s), s.Condition]),
        route.operationId,
      ).toEqual(
        route.signingSecrets === 'seal'
          ? [
              [
                ['kms:GenerateDataKey'],
                { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' } },
              ],
            ]
          : [],
      );
      if (!route.data) {
        expect(data, route.operationId).toEqual([]);
        continue;
      }
      expect(data, route.operationId).toHaveLength(1);
      const [grant] = data as [Statement];
      expect(grant.Effect).toBe('Allow');
      expect(actionsOf(grant), route.operationId).toEqual([...route.data.actions].sort());
      const resource = JSON.stringify(grant.Resource);
      expect(resource, route.operationId).toMatch(tableReference(route.data.table, 'Arn'));
      const other = route.data.table === 'pets' ? 'wallets' : 'pets';
      expect(resource, route.operationId).not.toMatch(tableReference(other, 'Arn'));
    }
  });

  it('grants the concrete actions the handlers need, and nothing broader', () => {
    const grant = (operationId: OperationId) => {
      const found = statementsOf(routeFunction(operationId)).find((s) =>
        actionsOf(s).some((a) => a.startsWith('dynamodb:')),
      );
      if (!found) throw new Error(`${operationId} has no DynamoDB grant`);
      return found;
    };
    expect(actionsOf(grant('addPet'))).toEqual(['dynamodb:PutItem']);
    // A keyed registration reads and writes the key's record in the transactions of the endpoint
    // set (TransactGetItems and TransactWriteItems, authorised by their items' actions): no new
    // action. It seals secrets and never opens one, so no replay can show a secret again.
    expect(actionsOf(grant('createWebhook'))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(statementsOf(routeFunction('createWebhook')).flatMap(actionsOf)).not.toContain('kms:Decrypt');
    expect(JSON.stringify(grant('addPet').Resource)).toMatch(tableReference('pets', 'Arn'));
    expect(actionsOf(grant('getPetById'))).toEqual(['dynamodb:GetItem']);
    expect(actionsOf(grant('updatePet'))).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
    ]);
    expect(actionsOf(grant('updatePetWithForm'))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(actionsOf(grant('deletePet'))).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem']);
    for (const [search, index, other] of [
      ['findPetsByStatus', 'status', 'tags'],
      ['findPetsByTags', 'tags', 'status'],
    ] as const) {
      expect(actionsOf(grant(search))).toEqual(['dynamodb:BatchGetItem', 'dynamodb:Query']);
      // The table and the one index it reads, not the other.
      expect(JSON.stringify(grant(search).Resource)).toContain(`/index/${index}`);
      expect(JSON.stringify(grant(search).Resource)).not.toContain(`/index/${other}`);
    }
    // Only the searches query: no other pet function may read an index.
    expect(JSON.stringify(grant('updatePet').Resource)).not.toMatch(/index/);
    expect(actionsOf(grant('getBalance'))).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
    ]);
    expect(JSON.stringify(grant('getBalance').Resource)).toMatch(tableReference('wallets', 'Arn'));
    expect(actionsOf(grant('sendMoney'))).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(JSON.stringify(grant('sendMoney').Resource)).not.toContain('index');
    expect(actionsOf(grant('getTransfer'))).toEqual(['dynamodb:BatchGetItem']);
    // The history query reaches the table's indexes by name (history, and for a hot wallet its
    // posted credits' history-shards and its credits in transit's pending), as does the balance
    // (pending), and no other function any index.
    expect(actionsOf(grant('listTransfers'))).toEqual(['dynamodb:BatchGetItem', 'dynamodb:Query']);
    expect(JSON.stringify(grant('listTransfers').Resource)).toContain('/index/history');
    expect(JSON.stringify(grant('listTransfers').Resource)).toContain('/index/history-shards');
    expect(JSON.stringify(grant('listTransfers').Resource)).toContain('/index/pending');
    expect(JSON.stringify(grant('getBalance').Resource)).toContain('/index/pending');
    expect(JSON.stringify(grant('getBalance').Resource)).not.toContain('/index/history');
    // The webhooks table's readers: each the one index it reads.
    expect(JSON.stringify(grant('listWebhookDeliveries').Resource)).toContain('/index/deliveries');
    expect(JSON.stringify(grant('listEvents').Resource)).toContain('/index/events');
    for (const reader of ['listWebhookDeliveries', 'listEvents'] as const) {
      expect(JSON.stringify(grant(reader).Resource)).not.toContain('/index/due');
    }
    expect(JSON.stringify(grant('listWebhookDeliveries').Resource)).not.toContain('/index/events');
    expect(JSON.stringify(grant('listEvents').Resource)).not.toContain('/index/deliveries');
    // The scheduled audit reads, and only reads.
    const audit = statementsOf(built.service.ledgerAudit.function).find((s) =>
      actionsOf(s).some((a) => a.startsWith('dynamodb:')),
    );
    expect(audit && actionsOf(audit)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:Scan']);
    const everyAction = Object.values(service.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[]).flatMap(actionsOf),
    );
    for (const broad of ['dynamodb:*', '*']) {
      expect(everyAction).not.toContain(broad);
    }
    // Deletes: a pet and its tag entries (PUT and DELETE of a pet), on the pets table; never a wallet item.
    expect(everyAction.filter((a) => a === 'dynamodb:DeleteItem')).toHaveLength(2);
    for (const operationId of ['updatePet', 'deletePet'] as const) {
      expect(JSON.stringify(grant(operationId).Resource)).toMatch(tableReference('pets', 'Arn'));
      expect(JSON.stringify(grant(operationId).Resource)).not.toMatch(tableReference('wallets', 'Arn'));
    }
    // The ledger audit's child (a segment) and reducer (a bucket of movements scanned again).
    expect(everyAction.filter((a) => a === 'dynamodb:Scan')).toHaveLength(2);
    // The sweep queries the pending index's posted batches and completes them: no read by key.
    const sweep = statementsOf(built.service.batchSweep.function).find((s) =>
      actionsOf(s).some((a) => a.startsWith('dynamodb:')),
    );
    expect(sweep && actionsOf(sweep)).toEqual(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(JSON.stringify(sweep?.Resource)).toContain('/index/pending');
    // The history (its page and credits in transit), the balance (a hot wallet's pending sum), the
    // credit poster (credits in transit that other pollers wait for), the sweep, the two pet
    // searches, a webhook endpoint's delivery log, the events API and the webhook dispatcher (its
    // due tasks).
    expect(everyAction.filter((a) => a === 'dynamodb:Query')).toHaveLength(9);
    expect(JSON.stringify(service.toJSON())).not.toContain('/index/*');
  });

  it('gives the authorizer and the public function no DynamoDB access at all', () => {
    for (const fn of [built.service.authorizerFunction, routeFunction('getOpenApi')]) {
      expect(statementsOf(fn), fn.node.path).toEqual([xray]);
      expect(JSON.stringify(functionProps(fn))).not.toMatch(/Table/);
    }
  });

  it('refuses a second data grant for one function', () => {
    expect(() =>
      routeFunction('addPet').grantData(built.stateful.tables.wallets, ['dynamodb:GetItem']),
    ).toThrow(/already has its data grant/);
  });
});

describe('tables', () => {
  it('creates each table of the shared definitions on demand, with PITR and AWS-managed encryption', () => {
    for (const [name, definition] of Object.entries(tables) as [TableName, (typeof tables)[TableName]][]) {
      const resource = stateful.toJSON().Resources[logicalId(built.stateful, built.stateful.tables[name])];
      expect(resource, name).toMatchObject({
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          BillingMode: 'PAY_PER_REQUEST',
          KeySchema: [{ AttributeName: definition.partitionKey.name, KeyType: 'HASH' }],
          AttributeDefinitions: expect.arrayContaining([
            { AttributeName: definition.partitionKey.name, AttributeType: definition.partitionKey.type },
          ]),
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          SSESpecification: { SSEEnabled: true },
        },
      });
      expect(resource.Properties.TableName, 'names are generated, never hard-coded').toBeUndefined();
      // The indexes of the definition, as DynamoDB Local gets them (createTableInput).
      const local = createTableInput('local', definition);
      expect(resource.Properties.GlobalSecondaryIndexes ?? []).toEqual(
        (local.GlobalSecondaryIndexes ?? []).map((index) => expect.objectContaining(index)),
      );
      expect([...resource.Properties.AttributeDefinitions].sort(byName)).toEqual(
        [...(local.AttributeDefinitions ?? [])].sort(byName),
      );
    }
  });

  it("expires wallet idempotency records and the records of adds' keys by TTL", () => {
    const props = (name: TableName) =>
      stateful.toJSON().Resources[logicalId(built.stateful, built.stateful.tables[name])].Properties;
    expect(props('wallets').TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(props('wallets').KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(props('pets').TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(props('pets').KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
    expect(
      props('pets').GlobalSecondaryIndexes.map((index: { Projection: unknown }) => index.Projection),
    ).toEqual([{ ProjectionType: 'KEYS_ONLY' }, { ProjectionType: 'KEYS_ONLY' }]);
  });

  it("outputs each table's generated name for running the functions elsewhere", () => {
    stateful.hasOutput('PetsTableName', { Description: Match.stringLikeRegexp('^PETS_TABLE_NAME: ') });
    stateful.hasOutput('WalletsTableName', { Description: Match.stringLikeRegexp('^WALLETS_TABLE_NAME: ') });
  });

  it("protects prod's tables (the default): deletion protection on, retained when the stack goes", () => {
    const template = Template.fromStack(buildServiceApp({ stage: 'prod' }).stateful);
    template.resourceCountIs('AWS::DynamoDB::Table', Object.keys(tables).length);
    template.allResourcesProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: true });
    template.allResources('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it("deletes dev's tables with their stack: stages.dev turns the protection off", () => {
    stateful.allResourcesProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: false });
    stateful.allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });
});

describe('gateway responses', () => {
  it('answers every gateway response of the shared table in problem+json', () => {
    const found = Object.values(service.findResources('AWS::ApiGateway::GatewayResponse'));
    expect(found.map((r) => r.Properties.ResponseType).sort()).toEqual(
      gatewayResponses.map((r) => r.type).sort(),
    );
    for (const response of gatewayResponses) {
      const headers: Json = { 'gatewayresponse.header.Content-Type': "'application/problem+json'" };
      for (const [name, value] of Object.entries(response.headers ?? {})) {
        headers[`gatewayresponse.header.${name}`] = `'${value}'`;
      }
      service.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: response.type,
        StatusCode: response.status === undefined ? Match.absent() : String(response.status),
        ResponseParameters: headers,
        ResponseTemplates: { 'application/json': gatewayResponseTemplate(response) },
      });
    }
  });

  it('answers 401 with WWW-Authenticate, 403 for a missing scope and 429 when throttled', () => {
    const byType = (type: string) =>
      Object.values(
        service.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }),
      )[0]?.Properties;
    expect(byType('UNAUTHORIZED')).toMatchObject({
      StatusCode: '401',
      ResponseParameters: {
        'gatewayresponse.header.Content-Type': "'application/problem+json'",
        'gatewayresponse.header.WWW-Authenticate': '\'Bearer error="invalid_token"\'',
      },
    });
    expect(JSON.parse(byType('UNAUTHORIZED').ResponseTemplates['application/json'])).toMatchObject({
      status: 401,
      requestId: '$context.requestId',
    });
    expect(byType('ACCESS_DENIED')).toMatchObject({
      StatusCode: '403',
      ResponseParameters: {
        'gatewayresponse.header.WWW-Authenticate': '\'Bearer error="insufficient_scope"\'',
      },
    });
    expect(byType('THROTTLED')).toMatchObject({ StatusCode: '429' });
    expect(byType('DEFAULT_5XX')?.StatusCode).toBeUndefined();
  });

  it.each(['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR'])(
    'answers %s (the identity provider down) with 503 temporarily-unavailable and Retry-After, no 401 challenge',
    (type) => {
      const [response] = Object.values(
        service.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }),
      );
      expect(response?.Properties).toMatchObject({
        StatusCode: '503',
        ResponseParameters: {
          'gatewayresponse.header.Content-Type': "'application/problem+json'",
          'gatewayresponse.header.Retry-After': "'5'",
        },
      });
      expect(response?.Properties.ResponseParameters).not.toHaveProperty(
        'gatewayresponse.header.WWW-Authenticate',
      );
      expect(JSON.parse(response?.Properties.ResponseTemplates['application/json'])).toMatchObject({
        type: 'urn:problem-type:wallet-catalog:temporarily-unavailable',
        status: 503,
        requestId: '$context.requestId',
      });
    },
  );
});

describe('stage', () => {
  const stage = () => Object.values(service.findResources('AWS::ApiGateway::Stage'))[0]?.Properties;

  it('is a regional API whose stage is named after the deployment stage', () => {
    service.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    expect(stage().StageName).toBe('dev');
  });

  it('writes JSON access logs to a log group with the retention of the context', () => {
    const { DestinationArn, Format } = stage().AccessLogSetting;
    const accessLogsId = logicalId(built.service, built.service.node.findChild('AccessLogs'));
    expect(JSON.stringify(DestinationArn)).toContain(`"Ref":"${accessLogsId}"`);
    expect(service.toJSON().Resources[accessLogsId].Properties.RetentionInDays).toBe(14);
    expect(JSON.parse(Format)).toMatchObject({
      requestId: '$context.requestId',
      stage: '$context.stage',
      status: '$context.status',
      principalId: '$context.authorizer.principalId',
      authorizerError: '$context.authorizer.error',
      integrationLatency: '$context.integrationLatency',
    });
  });

  it('throttles, traces, records metrics and logs errors without bodies', () => {
    expect(stage()).toMatchObject({
      TracingEnabled: true,
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 100,
          ThrottlingBurstLimit: 200,
          MetricsEnabled: true,
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
        },
      ],
    });
    // Access and execution logs need the account's API Gateway logging role.
    service.resourceCountIs('AWS::ApiGateway::Account', 1);
  });

  it("outputs the API URL and the probe function's ARN under stable names, for the pipeline's smoke test", () => {
    service.hasOutput('ApiUrl', { Value: Match.objectLike({ 'Fn::Join': Match.anyValue() }) });
    const probeId = logicalId(built.service, built.service.probe.function.function);
    service.hasOutput('ProbeFunctionArn', { Value: { 'Fn::GetAtt': [probeId, 'Arn'] } });
    expect(Object.keys(service.findOutputs('*')).sort()).toEqual(['ApiUrl', 'ProbeFunctionArn']);
  });
});

describe('app and context', () => {
  it('names both stacks after the stage, keeps them environment-agnostic, and feeds the stage to the API', () => {
    const prod = buildServiceApp({
      stage: 'prod',
      stages: { prod: { 'api:throttlingRateLimit': '5', 'api:throttlingBurstLimit': '10' } },
    });
    expect(prod.stateful.stackName).toBe('wallet-catalog-prod-stateful');
    expect(prod.service.stackName).toBe('wallet-catalog-prod-service');
    expect(prod.service.environment).toBe('aws://unknown-account/unknown-region');
    expect(prod.stateful.environment).toBe('aws://unknown-account/unknown-region');
    Template.fromStack(prod.service).hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 })],
    });
  });

  it.each([
    ['auth:cacheTtlSeconds', 'soon'],
    ['auth:cacheTtlSeconds', 3601],
    ['auth:issuer', 'http://issuer.example.com'],
    ['auth:jwksUrl', 'not a url'],
    ['logs:retentionDays', 31],
    ['wallet:currency', 'usd'],
    ['wallet:idempotencyTtlSeconds', 3600],
    ['data:deletionProtection', 'yes'],
    ['stage', 'Prod'],
    ['logs:level', 'WARN'],
    ['alarms:email', 'oncall'],
    ['env:account', '1234'],
  ])('refuses %s = %j, naming the key', (key, value) => {
    // Without stage overrides, so that the top-level key is the one read.
    expect(() => buildServiceApp({ stages: {}, [key]: value })).toThrow(new RegExp(`"${key}"`));
  });

  it('reads each stage from stages.<stage> over the top-level defaults', () => {
    const app = buildServiceApp().app;
    const dev = readConfig(app, 'dev');
    const prod = readConfig(app, 'prod');
    expect(dev).toMatchObject({
      stage: 'dev',
      logLevel: 'DEBUG',
      logRetention: 14,
      deletionProtection: false,
    });
    expect(prod).toMatchObject({
      stage: 'prod',
      logLevel: 'INFO',
      logRetention: 90,
      deletionProtection: true,
      throttling: { rateLimit: 200, burstLimit: 400 },
    });
    // What no stage overrides is the default for both.
    expect(dev.auth).toEqual(prod.auth);
    expect(dev.throttling).toEqual({ rateLimit: 100, burstLimit: 200 });
    expect(dev.env).toBeUndefined();
    expect(dev.alarmEmail).toBeUndefined();
  });

  it('names the stage override in errors, and refuses one that no setting reads', () => {
    expect(() =>
      buildServiceApp({ stages: { dev: { 'auth:issuer': 'http://issuer.example.com' } } }),
    ).toThrow(/"stages\.dev\.auth:issuer" must be an https URL/);
    expect(() => buildServiceApp({ stages: { dev: { 'logs:levle': 'INFO' } } })).toThrow(
      /"stages\.dev" sets "logs:levle", which no setting reads/,
    );
    expect(() => buildServiceApp({ stages: { dev: 'DEBUG' } })).toThrow(/"stages\.dev" must be an object/);
  });

  it('takes stages as JSON too, as `-c stages=...` passes it', () => {
    const app = buildServiceApp({ stages: JSON.stringify({ dev: { 'logs:level': 'TRACE' } }) });
    Template.fromStack(app.service).allResourcesProperties('AWS::Lambda::Function', {
      LoggingConfig: Match.objectLike({ ApplicationLogLevel: 'TRACE' }),
    });
    expect(() => buildServiceApp({ stages: '{dev:' })).toThrow(/"stages" must be an object \(or its JSON\)/);
  });

  it('refuses log levels above INFO, which would drop the metric lines', () => {
    expect(() => buildServiceApp({ stages: { dev: { 'logs:level': 'ERROR' } } })).toThrow(
      /INFO lines metrics come from/,
    );
  });

  it('puts a stage in an explicit account and region only when both are set', () => {
    const pinned = buildServiceApp({
      stages: { dev: { 'env:account': '111111111111', 'env:region': 'eu-west-1' } },
    });
    expect(pinned.service.environment).toBe('aws://111111111111/eu-west-1');
    expect(pinned.stateful.environment).toBe('aws://111111111111/eu-west-1');
    expect(() => buildServiceApp({ stages: { dev: { 'env:account': '111111111111' } } })).toThrow(
      /"env:account" and "env:region" must be set together/,
    );
  });

  it("gives the authorizer the identity provider's scope prefix only when one is set", () => {
    const variables = (app: ServiceApp) =>
      Template.fromStack(app.service).toJSON().Resources[
        logicalId(app.service, app.service.authorizerFunction.function)
      ].Properties.Environment.Variables;
    expect(variables(built)).not.toHaveProperty('AUTH_SCOPE_PREFIX');
    expect(variables(buildServiceApp({ 'auth:scopePrefix': 'wallet-api/' }))).toMatchObject({
      AUTH_ISSUER: cdkJson.context['auth:issuer'],
      AUTH_SCOPE_PREFIX: 'wallet-api/',
    });
  });

  it("gives the authorizer the stage's token rules: typ required and the longest lifetime", () => {
    const variables = (app: ServiceApp) =>
      Template.fromStack(app.service).toJSON().Resources[
        logicalId(app.service, app.service.authorizerFunction.function)
      ].Properties.Environment.Variables;
    expect(variables(built)).toMatchObject({
      AUTH_REQUIRE_AT_JWT_TYP: String(cdkJson.context['auth:requireAtJwtTyp']),
      AUTH_MAX_TOKEN_LIFETIME_SECONDS: String(cdkJson.context['auth:maxTokenLifetimeSeconds']),
    });
    const cognito = buildServiceApp({ 'auth:requireAtJwtTyp': false, 'auth:maxTokenLifetimeSeconds': 3600 });
    expect(variables(cognito)).toMatchObject({
      AUTH_REQUIRE_AT_JWT_TYP: 'false',
      AUTH_MAX_TOKEN_LIFETIME_SECONDS: '3600',
    });
  });

  it('tags both stacks with the project and the stage', () => {
    for (const stack of [built.stateful, built.service]) {
      expect(stack.tags.tagValues()).toEqual({ project: 'wallet-catalog', stage: 'dev' });
    }
  });

  it('refuses to synthesize without a context value rather than guessing', () => {
    const context = testContext();
    delete context['auth:audience'];
    expect(() => createServiceApp({ context })).toThrow(/"auth:audience" is missing/);
  });

  it('deploys the same wallet defaults the local gateway and the tests run with', () => {
    expect({
      currency: cdkJson.context['wallet:currency'],
      currencyDecimals: cdkJson.context['wallet:currencyDecimals'],
      maxTransferMinor: cdkJson.context['wallet:maxTransferMinor'],
      idempotencyTtlSeconds: cdkJson.context['wallet:idempotencyTtlSeconds'],
      // Off unless a stage lists origins.
      corsAllowedOrigins: cdkJson.context['api:corsAllowedOrigins'] === '' ? [] : ['listed'],
    }).toEqual(defaultServiceSettings);
  });
});
