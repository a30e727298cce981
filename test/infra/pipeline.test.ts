import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp, createPipelineApp, type PipelineApp } from '#infra/app.ts';
import { PIPELINE_STACK_NAME, readPipelineConfig } from '#infra/config/pipeline-config.ts';
import { probeFunctionName } from '#infra/constructs/synthetic-probe.ts';
import { SYNTH_COMMANDS } from '#infra/pipeline/pipeline-stack.ts';
import { probeCommands, smokeTestCommands } from '#infra/pipeline/smoke-test.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };
import lock from '../../package-lock.json' with { type: 'json' };
import {
  buildPipelineApp as build,
  PIPELINE_CONNECTION_ARN as CONNECTION_ARN,
  testContext,
} from '../support/cdk.ts';

type Json = Record<string, unknown>;
interface Action {
  Name: string;
  RunOrder: number;
  ActionTypeId: { Category: string; Provider: string };
  Configuration: Json;
}
interface PipelineStage {
  Name: string;
  Actions: Action[];
}

let built: PipelineApp;
let template: Template;
let stages: PipelineStage[];

beforeAll(() => {
  built = build();
  template = Template.fromStack(built.pipeline);
  const [pipeline] = Object.values(template.findResources('AWS::CodePipeline::Pipeline'));
  stages = pipeline?.Properties.Stages;
});

const stage = (name: string) => {
  const found = stages.find((s) => s.Name === name);
  if (!found) throw new Error(`No pipeline stage ${name}`);
  return found;
};

/** The properties of the CodeBuild project an action runs. */
function projectOf(action: Action | undefined): Json {
  if (!action) throw new Error('No such action');
  const projectId = (action.Configuration.ProjectName as { Ref: string }).Ref;
  return template.toJSON().Resources[projectId].Properties;
}

/** The buildspec of the CodeBuild project an action runs. */
function buildSpecOf(action: Action | undefined): Json {
  return JSON.parse((projectOf(action).Source as { BuildSpec: string }).BuildSpec);
}

/** The statements granting a Lambda action, by the logical id of the role they are attached to. */
function lambdaGrants(t: Template): Map<string, Json[]> {
  const grants = new Map<string, Json[]>();
  for (const policy of Object.values(t.findResources('AWS::IAM::Policy'))) {
    const statements = (policy.Properties.PolicyDocument.Statement as Json[]).filter((statement) =>
      [statement.Action].flat().some((action) => String(action).startsWith('lambda:')),
    );
    if (statements.length === 0) continue;
    for (const role of policy.Properties.Roles as { Ref: string }[]) {
      grants.set(role.Ref, [...(grants.get(role.Ref) ?? []), ...statements]);
    }
  }
  return grants;
}

describe('what the app synthesizes', () => {
  it('is the stage stacks while pipeline:connectionArn is empty, as cdk.json has it', () => {
    const app = createApp({ context: testContext() });
    expect('service' in app && app.service.stackName).toBe('wallet-catalog-dev-service');
    expect(app.app.node.children.map((child) => child.node.id).sort()).toEqual([
      'wallet-catalog-dev-service',
      'wallet-catalog-dev-stateful',
    ]);
  });

  it('is the pipeline alone, holding its stages, once the connection is set', () => {
    const app = createApp({ context: testContext({ 'pipeline:connectionArn': CONNECTION_ARN }) });
    expect('pipeline' in app).toBe(true);
    expect(app.app.node.children.map((child) => child.node.id)).toEqual([PIPELINE_STACK_NAME]);
  });

  it('synthesizes offline, the pipeline template beside one nested assembly per stage', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'cdk-pipeline-test-'));
    try {
      const { app } = createPipelineApp({
        outdir,
        context: testContext({ 'pipeline:connectionArn': CONNECTION_ARN }),
      });
      const assembly = app.synth();
      expect(assembly.stacks.map((stack) => stack.stackName)).toEqual([PIPELINE_STACK_NAME]);
      for (const name of ['dev', 'prod']) {
        const nested = assembly.getNestedAssembly(`assembly-${PIPELINE_STACK_NAME}-${name}`);
        expect(nested.stacks.map((stack) => stack.stackName).sort()).toEqual([
          `wallet-catalog-${name}-service`,
          `wallet-catalog-${name}-stateful`,
        ]);
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a malformed connection ARN, and a stage in another account without the pipeline account', () => {
    expect(() => build({ 'pipeline:connectionArn': 'arn:aws:s3:::bucket' })).toThrow(
      /"pipeline:connectionArn"/,
    );
    expect(() =>
      build({ stages: { prod: { 'env:account': '222222222222', 'env:region': 'eu-west-1' } } }),
    ).toThrow(/"pipeline:account" and "pipeline:region" must be set/);
  });

  it('reads no pipeline without a connection', () => {
    const { app } = createApp({ context: testContext() });
    expect(readPipelineConfig(app)).toBeUndefined();
  });
});

describe('pipeline', () => {
  it('is a V2 pipeline named after its stack that mutates itself, then deploys dev, then prod', () => {
    template.hasResourceProperties('AWS::CodePipeline::Pipeline', {
      Name: PIPELINE_STACK_NAME,
      PipelineType: 'V2',
    });
    expect(stages.map((s) => s.Name)).toEqual(['Source', 'Build', 'UpdatePipeline', 'Assets', 'dev', 'prod']);
  });

  it('takes the source from the connection, repository and branch of the context', () => {
    const [source] = stage('Source').Actions;
    expect(source?.ActionTypeId).toMatchObject({ Category: 'Source', Provider: 'CodeStarSourceConnection' });
    expect(source?.Configuration).toMatchObject({
      ConnectionArn: CONNECTION_ARN,
      FullRepositoryId: cdkJson.context['pipeline:repository'],
      BranchName: cdkJson.context['pipeline:branch'],
    });
  });

  it('synthesizes on the Ubuntu standard 8.0 image: npm ci, npm test, cdk synth, with Node 24 and Java 21', () => {
    const [synth] = stage('Build').Actions;
    expect(projectOf(synth)).toMatchObject({
      Environment: { Image: 'aws/codebuild/standard:8.0', ComputeType: 'BUILD_GENERAL1_MEDIUM' },
    });
    const spec = buildSpecOf(synth) as {
      phases: { install: Json; build: { commands: string[] } };
      artifacts: Json;
    };
    expect(spec.phases.install['runtime-versions']).toEqual({ nodejs: '24', java: 'corretto21' });
    expect(spec.phases.build.commands.slice(0, 3)).toEqual([...SYNTH_COMMANDS]);
    expect(SYNTH_COMMANDS).toEqual(['npm ci', 'npm test', 'npx cdk synth']);
    // Fails the build when cdk.out lacks the pipeline, rather than leaving self-mutation to.
    expect(spec.phases.build.commands[3]).toContain(`cdk.out/${PIPELINE_STACK_NAME}.template.json`);
    expect(spec.artifacts).toMatchObject({ 'base-directory': 'cdk.out' });
  });

  it('mutates itself with the CDK CLI version package-lock.json pins', () => {
    const [mutate] = stage('UpdatePipeline').Actions;
    const spec = buildSpecOf(mutate) as { phases: { install: { commands: string[] } } };
    expect(spec.phases.install.commands).toContain(
      `npm install -g aws-cdk@${lock.packages['node_modules/aws-cdk'].version}`,
    );
  });

  it('encrypts its artifacts under a rotating key of its own', () => {
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    for (const project of Object.values(template.findResources('AWS::CodeBuild::Project'))) {
      expect(project.Properties.EncryptionKey).toBeDefined();
    }
  });
});

describe('stages', () => {
  const deployOrder = (name: string) =>
    stage(name)
      .Actions.filter((a) => a.ActionTypeId.Provider === 'CloudFormation')
      .map((a) => a.Name);

  it('deploy the stateful stack, then the service stack, of each stage', () => {
    for (const name of ['dev', 'prod']) {
      expect(deployOrder(name)).toEqual([
        `wallet-catalog-${name}-stateful.Prepare`,
        `wallet-catalog-${name}-stateful.Deploy`,
        `wallet-catalog-${name}-service.Prepare`,
        `wallet-catalog-${name}-service.Deploy`,
      ]);
    }
  });

  it("let prod wait for a manual approval once the stateful stack's change set exists, before anything deploys, and dev not", () => {
    const approvals = (name: string) =>
      stage(name).Actions.filter((a) => a.ActionTypeId.Category === 'Approval');
    expect(approvals('dev')).toEqual([]);
    const prodApprovals = approvals('prod');
    expect(prodApprovals).toHaveLength(1);
    const [approval] = prodApprovals;
    expect(approval?.Name).toBe('wallet-catalog-prod-stateful.PromoteTo-prod');
    const runOrder = (name: string) =>
      stage('prod').Actions.find((a) => a.Name === name)?.RunOrder ?? Number.NaN;
    // The approver can read the change set the stateful stack's Prepare made.
    expect(approval?.RunOrder).toBeGreaterThan(runOrder('wallet-catalog-prod-stateful.Prepare'));
    const executions = stage('prod')
      .Actions.filter((a) => a.ActionTypeId.Provider === 'CloudFormation')
      .filter((a) => a.Configuration.ActionMode === 'CHANGE_SET_EXECUTE');
    expect(executions.map((a) => a.Name).sort()).toEqual([
      'wallet-catalog-prod-service.Deploy',
      'wallet-catalog-prod-stateful.Deploy',
    ]);
    for (const deploy of executions) expect(approval?.RunOrder).toBeLessThan(deploy.RunOrder);
    // The service stack's change set follows the stateful stack's deploy, so after the approval too.
    expect(approval?.RunOrder).toBeLessThan(runOrder('wallet-catalog-prod-service.Prepare'));
  });

  it('smoke-test each stage after it deployed, against the URL and probe its service stack outputs', () => {
    for (const name of ['dev', 'prod']) {
      const actions = stage(name).Actions;
      const smoke = actions.find((a) => a.Name === `SmokeTest-${name}`);
      const lastDeploy = Math.max(
        ...actions.filter((a) => a.ActionTypeId.Provider === 'CloudFormation').map((a) => a.RunOrder),
      );
      expect(smoke?.RunOrder).toBeGreaterThan(lastDeploy);
      const service = actions.find((a) => a.Name === `wallet-catalog-${name}-service.Deploy`);
      const namespace = (service as Action & { Namespace: string }).Namespace;
      expect(JSON.parse(smoke?.Configuration.EnvironmentVariables as string)).toEqual([
        { name: 'API_URL', type: 'PLAINTEXT', value: `#{${namespace}.ApiUrl}` },
        { name: 'PROBE_FUNCTION_ARN', type: 'PLAINTEXT', value: `#{${namespace}.ProbeFunctionArn}` },
      ]);
      const spec = buildSpecOf(smoke) as { phases: { build: { commands: string[] } } };
      // The requests without a token first, then a run of the probe: a real token, down to DynamoDB.
      expect(spec.phases.build.commands).toEqual([...smokeTestCommands(), ...probeCommands()]);
      expect(spec.phases.build.commands.join('\n')).toContain('aws lambda invoke');
    }
  });

  it("output each stage's probe ARN, of the function the pipeline names before the stage exists", () => {
    for (const s of built.pipeline.stages) {
      const service = Template.fromStack(s.service);
      const probeId = s.service.getLogicalId(s.service.probe.function.function.node.defaultChild as never);
      expect(service.toJSON().Outputs.ProbeFunctionArn.Value).toEqual({ 'Fn::GetAtt': [probeId, 'Arn'] });
      expect(service.toJSON().Resources[probeId].Properties.FunctionName).toBe(
        probeFunctionName(s.stageName),
      );
    }
  });

  it("let each smoke test invoke its own stage's probe and no other function", () => {
    const invokers = lambdaGrants(template);
    for (const name of ['dev', 'prod']) {
      const role = (
        projectOf(stage(name).Actions.find((a) => a.Name === `SmokeTest-${name}`)).ServiceRole as {
          'Fn::GetAtt': [string, string];
        }
      )['Fn::GetAtt'][0];
      expect(invokers.get(role)).toEqual([
        {
          Action: 'lambda:InvokeFunction',
          Effect: 'Allow',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':lambda:',
                { Ref: 'AWS::Region' },
                ':',
                { Ref: 'AWS::AccountId' },
                `:function:${probeFunctionName(name)}`,
              ],
            ],
          },
        },
      ]);
    }
    // No other role of the pipeline may invoke a function.
    expect(invokers.size).toBe(2);
  });

  it('hold stacks named and tagged after their stage, configured from stages.<stage>', () => {
    const [dev, prod] = built.pipeline.stages;
    expect(dev?.stageName).toBe('dev');
    expect(prod?.stageName).toBe('prod');
    for (const s of [dev, prod]) {
      expect(s?.stateful.stackName).toBe(`wallet-catalog-${s?.stageName}-stateful`);
      expect(s?.service.stackName).toBe(`wallet-catalog-${s?.stageName}-service`);
      expect(s?.service.tags.tagValues()).toEqual({ project: 'wallet-catalog', stage: s?.stageName });
    }
    const tableProtection = (s: typeof dev) =>
      Object.values(Template.fromStack(s?.stateful as never).findResources('AWS::DynamoDB::Table')).map(
        (t) => t.Properties.DeletionProtectionEnabled,
      );
    // The pets, wallets and webhooks tables.
    expect(tableProtection(dev)).toEqual([false, false, false]);
    expect(tableProtection(prod)).toEqual([true, true, true]);
    const logLevel = (s: typeof dev) =>
      Object.values(Template.fromStack(s?.service as never).findResources('AWS::Lambda::Function')).map(
        (f) => f.Properties.LoggingConfig.ApplicationLogLevel,
      );
    expect(new Set(logLevel(dev))).toEqual(new Set(['DEBUG']));
    expect(new Set(logLevel(prod))).toEqual(new Set(['INFO']));
  });

  it('deploy a stage into its own account when the context names one', () => {
    const crossAccount = build({
      'pipeline:account': '111111111111',
      'pipeline:region': 'eu-west-1',
      stages: { prod: { 'env:account': '222222222222', 'env:region': 'eu-west-1' } },
    });
    expect(crossAccount.pipeline.environment).toBe('aws://111111111111/eu-west-1');
    const [dev, prod] = crossAccount.pipeline.stages;
    expect(prod?.service.environment).toBe('aws://222222222222/eu-west-1');
    expect(dev?.service.environment).toBe('aws://unknown-account/unknown-region');
    const [pipeline] = Object.values(
      Template.fromStack(crossAccount.pipeline).findResources('AWS::CodePipeline::Pipeline'),
    );
    const prodStage = (pipeline?.Properties.Stages as PipelineStage[] | undefined)?.find(
      (s) => s.Name === 'prod',
    );
    const deploy = prodStage?.Actions.find((a) => a.Name === 'wallet-catalog-prod-service.Deploy') as
      | (Action & { RoleArn: unknown })
      | undefined;
    expect(JSON.stringify(deploy?.RoleArn)).toContain('222222222222');
  });

  it("let the pipeline's account invoke the probe of a stage in another account, only its smoke test granted it", () => {
    const crossAccount = build({
      'pipeline:account': '111111111111',
      'pipeline:region': 'eu-west-1',
      stages: { prod: { 'env:account': '222222222222', 'env:region': 'eu-west-1' } },
    });
    const [dev, prod] = crossAccount.pipeline.stages;
    const permissions = (s: typeof dev) =>
      Object.values(Template.fromStack(s?.service as never).findResources('AWS::Lambda::Permission'))
        .map((p) => p.Properties)
        .filter((p) => p.Principal === '111111111111');
    expect(permissions(dev)).toEqual([]);
    const prodProbe = prod?.service.probe.function.function;
    expect(permissions(prod)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        Principal: '111111111111',
        FunctionName: {
          'Fn::GetAtt': [prod?.service.getLogicalId(prodProbe?.node.defaultChild as never), 'Arn'],
        },
      },
    ]);
    const resources = [...lambdaGrants(Template.fromStack(crossAccount.pipeline)).values()]
      .flat()
      .map((statement) => statement.Resource);
    expect(resources).toEqual([
      `arn:aws:lambda:eu-west-1:111111111111:function:${probeFunctionName('dev')}`,
      `arn:aws:lambda:eu-west-1:222222222222:function:${probeFunctionName('prod')}`,
    ]);
  });
});
