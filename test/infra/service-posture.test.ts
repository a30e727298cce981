import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import { COUNTED_MANAGED_RULES } from '#infra/constructs/caller-rate-limit.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';
import { NO_ALARM_SUBSCRIBER_WARNING } from '#infra/stacks/stateful-stack.ts';
import { type OperationId, type Route, routes } from '#shared/routes.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };
import { buildServiceApp, type Json, logicalId, NO_SUBSCRIBER_IN_TESTS } from '../support/cdk.ts';

const routeTable: readonly (Route & { operationId: OperationId })[] = routes;

/** API Gateway cuts an integration off after 29 seconds, whatever the function's own timeout. */
const API_GATEWAY_INTEGRATION_TIMEOUT_S = 29;

let dev: ServiceApp;
let prod: ServiceApp;
let devService: Template;
let prodService: Template;

beforeAll(() => {
  dev = buildServiceApp();
  prod = buildServiceApp({ stage: 'prod' });
  devService = Template.fromStack(dev.service);
  prodService = Template.fromStack(prod.service);
});

const resourcesOf = (t: Template, type: string): Json[] =>
  Object.values(t.findResources(type)).map((r) => r.Properties as Json);

describe('TLS', () => {
  it('pins the REST API to an enhanced TLS 1.2+ security policy in strict endpoint access mode, in every stage', () => {
    for (const t of [devService, prodService]) {
      const [api] = resourcesOf(t, 'AWS::ApiGateway::RestApi');
      // TLS13_1_2: TLS 1.3 preferred, 1.2 the minimum; TLS13_1_3: 1.3 only. Never the legacy TLS_1_0.
      expect(api?.SecurityPolicy).toMatch(/^SecurityPolicy_TLS13_1_[23]_/);
      expect(api?.EndpointAccessMode).toBe('STRICT');
    }
  });
});

describe('per-caller rate limit (AWS WAF)', () => {
  const webAcl = (t: Template) => {
    const [acl] = resourcesOf(t, 'AWS::WAFv2::WebACL');
    if (!acl) throw new Error('no web ACL');
    return acl as {
      Scope: string;
      Rules: Json[];
      CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
    };
  };
  const rule = (t: Template, name: string) => {
    const found = webAcl(t).Rules.find((r) => r.Name === name);
    if (!found) throw new Error(`no rule ${name}`);
    return found as Json & { Statement: Json; Action?: Json };
  };

  it('associates a regional web ACL with the API stage', () => {
    expect(webAcl(devService).Scope).toBe('REGIONAL');
    const [association] = resourcesOf(devService, 'AWS::WAFv2::WebACLAssociation');
    const stageId = logicalId(dev.service, dev.service.api.deploymentStage);
    const arn = JSON.stringify(association?.ResourceArn);
    expect(arn).toContain(
      `/restapis/",{"Ref":"${logicalId(dev.service, dev.service.api)}"},"/stages/",{"Ref":"${stageId}"}`,
    );
    expect(JSON.stringify(association?.WebACLArn)).toContain(
      dev.service.getLogicalId(dev.service.callerRateLimit.webAcl),
    );
  });

  it('limits each bearer token to the configured requests per window, answering 429 problem JSON with Retry-After', () => {
    const t = Template.fromStack(
      buildServiceApp({ 'api:callerRateLimit': 77, 'api:callerRateWindowSeconds': 120 }).service,
    );
    const limit = rule(t, 'CallerRateLimit');
    expect(limit.Statement).toEqual({
      RateBasedStatement: {
        Limit: 77,
        EvaluationWindowSec: 120,
        AggregateKeyType: 'CUSTOM_KEYS',
        CustomKeys: [
          {
            Header: {
              Name: 'authorization',
              // Every spelling of one token (scheme case, spaces) is one key.
              TextTransformations: [
                { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
                { Priority: 1, Type: 'LOWERCASE' },
              ],
            },
          },
        ],
      },
    });
    const response = (limit.Action as { Block: { CustomResponse: Json } }).Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '120' }]);
    const body = webAcl(t).CustomResponseBodies[response.CustomResponseBodyKey as string];
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    const problem = JSON.parse(body?.Content ?? '') as Json;
    expect(problem).toMatchObject({ status: 429, title: 'Too many requests' });
    expect(problem.type).toMatch(/throttled$/);
    expect(problem.detail).toContain('77 requests in 120 seconds');
  });

  it('reads the limit per stage from cdk.json', () => {
    const limitOf = (t: Template) =>
      (rule(t, 'CallerRateLimit').Statement as { RateBasedStatement: { Limit: number } }).RateBasedStatement
        .Limit;
    expect(limitOf(devService)).toBe(cdkJson.context['api:callerRateLimit']);
    const custom = buildServiceApp({ stages: { dev: { 'api:callerRateLimit': 1234 } } }).service;
    expect(limitOf(Template.fromStack(custom))).toBe(1234);
  });

  it('refuses a window AWS WAF does not offer, and a limit under its minimum of 10', () => {
    expect(() => buildServiceApp({ 'api:callerRateWindowSeconds': 90 })).toThrow(/callerRateWindowSeconds/);
    expect(() => buildServiceApp({ 'api:callerRateLimit': 9 })).toThrow(/callerRateLimit/);
  });

  it('runs the AWS managed common rule set, counting only the body-size rule a valid pet can exceed', () => {
    const common = rule(devService, 'AwsCommonRuleSet');
    expect(common.OverrideAction).toEqual({ None: {} });
    expect(common.Statement).toEqual({
      ManagedRuleGroupStatement: {
        VendorName: 'AWS',
        Name: 'AWSManagedRulesCommonRuleSet',
        RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
      },
    });
    expect(Object.keys(COUNTED_MANAGED_RULES)).toEqual(['SizeRestrictions_BODY']);
  });
});

describe('console test-invoke', () => {
  const testInvokePermissions = (t: Template) =>
    resourcesOf(t, 'AWS::Lambda::Permission').filter((p) =>
      JSON.stringify(p.SourceArn).includes('test-invoke-stage'),
    );

  it('is allowed in dev, where it helps, and nowhere else, since it skips the authorizer', () => {
    expect(testInvokePermissions(devService)).toHaveLength(routeTable.length);
    expect(testInvokePermissions(prodService)).toEqual([]);
    const sandbox = Template.fromStack(buildServiceApp({ stage: 'alice' }).service);
    expect(testInvokePermissions(sandbox)).toEqual([]);
  });
});

describe('capacity', () => {
  const routeAndAuthorizerFunctions = (app: ServiceApp, t: Template) => {
    const ids = [app.service.authorizerFunction, ...app.service.functions.values()].map((fn) =>
      logicalId(app.service, fn.function),
    );
    return ids.map((id) => t.toJSON().Resources[id].Properties as Json);
  };

  it('reserves the configured concurrency for each route function and the authorizer in prod', () => {
    const reserved = cdkJson.context.stages.prod['lambda:reservedConcurrency'];
    expect(reserved).toBeGreaterThan(0);
    // The authorizer and every route reserve the stage's figure, but the routes left unreserved.
    const expected = [
      reserved,
      ...routeTable.map((route) => (route.reservedConcurrency === 'unreserved' ? undefined : reserved)),
    ];
    const [authorizer, ...routeFunctions] = routeAndAuthorizerFunctions(prod, prodService);
    expect([authorizer, ...routeFunctions].map((fn) => fn?.ReservedConcurrentExecutions)).toEqual(expected);
    for (const fn of routeAndAuthorizerFunctions(dev, devService)) {
      expect(fn.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  const reservedIn = (t: Template): number[] =>
    resourcesOf(t, 'AWS::Lambda::Function').flatMap((fn) =>
      typeof fn.ReservedConcurrentExecutions === 'number' ? [fn.ReservedConcurrentExecutions] : [],
    );
  const prodWith = (overrides: Json, top: Json = {}) =>
    buildServiceApp({
      stage: 'prod',
      stages: { ...cdkJson.context.stages, prod: { ...cdkJson.context.stages.prod, ...overrides } },
      ...top,
    });
  /** The smallest per-function figure whose reservations pass what `quota` lets the stage reserve. */
  const firstFigureOver = (quota: number) => {
    const perFunction = cdkJson.context.stages.prod['lambda:reservedConcurrency'];
    const all = reservedIn(prodService);
    const functions = all.filter((n) => n === perFunction).length;
    const others = all.reduce((sum, n) => sum + n, 0) - functions * perFunction;
    return Math.floor((quota - 100 - others) / functions) + 1;
  };

  it("leaves at least Lambda's 100 unreserved executions of the account's quota in prod", () => {
    const quota = cdkJson.context['lambda:accountConcurrency'];
    const total = reservedIn(prodService).reduce((sum, n) => sum + n, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(quota - 100);
  });

  it("fails synthesis when the stage's reservations pass what the account's quota lets it reserve", () => {
    const over = firstFigureOver(cdkJson.context['lambda:accountConcurrency']);
    expect(() =>
      Template.fromStack(prodWith({ 'lambda:reservedConcurrency': over - 1 }).service),
    ).not.toThrow();
    expect(() => Template.fromStack(prodWith({ 'lambda:reservedConcurrency': over }).service)).toThrow(
      /reserve \d+ concurrent executions, over the 900 an account quota of 1000/,
    );
  });

  it('lets a stage reserve more in an account whose quota was raised', () => {
    const over = firstFigureOver(cdkJson.context['lambda:accountConcurrency']);
    const raised = prodWith({ 'lambda:reservedConcurrency': over }, { 'lambda:accountConcurrency': 2000 });
    expect(() => Template.fromStack(raised.service)).not.toThrow();
  });

  it('times every function API Gateway waits on out well before it gives up on the integration', () => {
    // The scheduled ledger audit and the probe answer no request: their timeouts are their own.
    for (const fn of routeAndAuthorizerFunctions(prod, prodService)) {
      expect(fn.Timeout).toBeLessThan(API_GATEWAY_INTEGRATION_TIMEOUT_S);
    }
  });

  it("gives each route's function the timeout its route names, the project's otherwise", () => {
    for (const route of routeTable) {
      const fn = prod.service.functions.get(route.operationId);
      if (!fn) throw new Error(`No function for ${route.operationId}`);
      const { Timeout } = prodService.toJSON().Resources[logicalId(prod.service, fn.function)].Properties;
      expect(Timeout, route.operationId).toBe(route.timeoutSeconds ?? ProjectFunction.TIMEOUT.toSeconds());
    }
  });
});

describe('synthetic probe', () => {
  it('runs every 5 minutes against the stage, with its credentials read from Secrets Manager', () => {
    const probe = dev.service.probe.function;
    const probeId = logicalId(dev.service, probe.function);
    const [rule] = resourcesOf(devService, 'AWS::Events::Rule');
    expect(rule?.ScheduleExpression).toBe('rate(5 minutes)');
    expect(JSON.stringify(rule?.Targets)).toContain(probeId);
    const env = (devService.toJSON().Resources[probeId].Properties.Environment as { Variables: Json })
      .Variables;
    expect(env.PROBE_CREDENTIALS_SECRET).toBe('wallet-catalog/dev/probe-client');
    expect(env.PROBE_SCOPE).toBe('read:wallet');
    expect(env.PROBE_TOKEN_URL).toBe(cdkJson.context['probe:tokenUrl']);
    expect(JSON.stringify(env)).not.toMatch(/secret"?\s*:\s*"[^w]/i);
    // Its value only (not DescribeSecret, the secret's metadata, which the probe never reads), of
    // that one secret, by name (Secrets Manager appends six random characters).
    const grants = resourcesOf(devService, 'AWS::IAM::Policy')
      .flatMap((p) => (p.PolicyDocument as { Statement: Json[] }).Statement)
      .filter((statement) => JSON.stringify(statement.Action).includes('secretsmanager:'));
    expect(grants).toHaveLength(1);
    expect(grants[0]?.Action).toBe('secretsmanager:GetSecretValue');
    expect(JSON.stringify(grants[0]?.Resource)).toMatch(
      /:secret:wallet-catalog\/dev\/probe-client-\?{6}"\]\]\}$/,
    );
  });

  it('has an alarm that fires on failure and on silence (missing data breaches)', () => {
    const alarm = resourcesOf(devService, 'AWS::CloudWatch::Alarm').find(
      (a) => a.AlarmName === 'wallet-catalog-dev-probe-failed',
    );
    expect(alarm).toMatchObject({
      MetricName: 'ProbeSuccess',
      Statistic: 'Minimum',
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(alarm?.AlarmActions).toHaveLength(1);
  });
});

describe('alarm subscribers', () => {
  const noSubscriberWarnings = (app: ServiceApp) =>
    Annotations.fromStack(app.stateful).findWarning('*', Match.stringLikeRegexp(NO_ALARM_SUBSCRIBER_WARNING));

  it('refuses to synthesize prod with no one to notify, naming the keys that would fix it; dev needs no one', () => {
    expect(cdkJson.context.stages.prod['alarms:requireSubscriber']).toBe(true);
    expect(() => buildServiceApp({ stage: 'prod', 'alarms:noSubscriberReason': '' })).toThrow(
      /Stage "prod" requires an alarm subscriber .*"alarms:email".*"alarms:noSubscriberReason"/,
    );
    expect(dev.stateful.alarmTopic).toBeDefined();
    expect(noSubscriberWarnings(dev)).toEqual([]);
  });

  it('synthesizes prod without a subscriber once the reason is given, and still warns, quoting it', () => {
    const warnings = noSubscriberWarnings(prod);
    expect(warnings.map((w) => w.id)).toEqual([`/${prod.stateful.node.path}/AlarmTopic`]);
    expect(JSON.stringify(warnings[0]?.entry.data)).toContain(NO_SUBSCRIBER_IN_TESTS);
  });

  it('does not warn once prod mails someone', () => {
    const mailed = buildServiceApp({ stage: 'prod', 'alarms:email': 'oncall@example.com' });
    expect(noSubscriberWarnings(mailed)).toEqual([]);
  });
});

describe('backup of the ledger', () => {
  it('backs the wallet table up daily in prod into a retained vault, kept 35 days', () => {
    const stateful = Template.fromStack(prod.stateful);
    const walletsId = logicalId(prod.stateful, prod.stateful.tables.wallets);
    const [vault] = Object.values(stateful.findResources('AWS::Backup::BackupVault'));
    expect(vault?.DeletionPolicy).toBe('Retain');
    const [plan] = resourcesOf(stateful, 'AWS::Backup::BackupPlan');
    const [rule] = (plan?.BackupPlan as { BackupPlanRule: Json[] } | undefined)?.BackupPlanRule ?? [];
    expect(rule?.Lifecycle).toEqual({ DeleteAfterDays: cdkJson.context['backup:retentionDays'] });
    expect(rule?.ScheduleExpression).toMatch(/^cron\(/);
    expect(rule?.CopyActions ?? []).toEqual([]);
    const [selection] = resourcesOf(stateful, 'AWS::Backup::BackupSelection');
    expect(JSON.stringify(selection)).toContain(walletsId);
    expect(JSON.stringify(selection)).not.toContain(logicalId(prod.stateful, prod.stateful.tables.pets));
  });

  it('copies each recovery point to the vault the context names', () => {
    const copyVault = 'arn:aws:backup:eu-central-1:222222222222:backup-vault:ledger-copies';
    const app = buildServiceApp({ stage: 'prod', 'backup:copyVaultArn': copyVault });
    const [plan] = resourcesOf(Template.fromStack(app.stateful), 'AWS::Backup::BackupPlan');
    const [rule] = (plan?.BackupPlan as { BackupPlanRule: Json[] } | undefined)?.BackupPlanRule ?? [];
    expect(rule?.CopyActions).toEqual([
      {
        DestinationBackupVaultArn: copyVault,
        Lifecycle: { DeleteAfterDays: cdkJson.context['backup:retentionDays'] },
      },
    ]);
  });

  it('is left to point-in-time recovery in dev', () => {
    Template.fromStack(dev.stateful).resourceCountIs('AWS::Backup::BackupPlan', 0);
  });
});

describe('cross-stack references', () => {
  it('are exports the service stack imports, so CloudFormation refuses to remove a table still in use', () => {
    const text = JSON.stringify(devService.toJSON());
    expect(text).not.toContain('Fn::GetStackOutput');
    expect(text).toContain('Fn::ImportValue');
    const outputs = Object.values(Template.fromStack(dev.stateful).toJSON().Outputs as Record<string, Json>);
    const exported = outputs.filter((o) => o.Export !== undefined);
    const walletsId = logicalId(dev.stateful, dev.stateful.tables.wallets);
    expect(exported.some((o) => JSON.stringify(o.Value).includes(walletsId))).toBe(true);
  });
});
