import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PipelineApp } from '#infra/app.ts';
import { NO_APPROVER_WARNING } from '#infra/pipeline/pipeline-stack.ts';
import lock from '../../package-lock.json' with { type: 'json' };
import { buildPipelineApp as build, type Json, logicalId } from '../support/cdk.ts';

let built: PipelineApp;
let template: Template;

beforeAll(() => {
  built = build();
  template = Template.fromStack(built.pipeline);
});

/** The install commands of every CodeBuild project whose buildspec mentions `word`. */
function installCommands(word: string): string[][] {
  return Object.values(template.findResources('AWS::CodeBuild::Project'))
    .map((project) => JSON.stringify(project.Properties.Source.BuildSpec))
    .filter((spec) => spec.includes(word))
    .map((spec) => {
      const parsed = JSON.parse(JSON.parse(spec)) as { phases?: { install?: { commands?: string[] } } };
      return parsed.phases?.install?.commands ?? [];
    });
}

describe('supply chain', () => {
  it('publishes the assets prod deploys with the cdk-assets version package-lock.json pins, never @latest', () => {
    const publishers = installCommands('cdk-assets --path');
    expect(publishers.length).toBeGreaterThan(0);
    for (const commands of publishers) {
      expect(commands).toContain(
        `npm install -g cdk-assets@${lock.packages['node_modules/cdk-assets'].version}`,
      );
      expect(commands.join('\n')).not.toMatch(/@latest/);
    }
  });
});

describe('artifacts', () => {
  it('retains the artifact key as long as the bucket it encrypts', () => {
    const bucket = built.pipeline.pipeline.pipeline.artifactBucket;
    const key = bucket.encryptionKey;
    if (!key) throw new Error('the artifact bucket has no key');
    const resources = template.toJSON().Resources;
    expect(resources[logicalId(built.pipeline, bucket)].DeletionPolicy).toBe('Retain');
    expect(resources[logicalId(built.pipeline, key)].DeletionPolicy).toBe('Retain');
  });
});

describe('manual approval', () => {
  const approvalAction = (t: Template) => {
    const [pipeline] = Object.values(t.findResources('AWS::CodePipeline::Pipeline'));
    const stages = pipeline?.Properties.Stages as { Name: string; Actions: Json[] }[];
    return stages.flatMap((s) => s.Actions).find((a) => (a.ActionTypeId as Json).Category === 'Approval') as {
      Configuration: Json;
    };
  };

  it('notifies the approval topic, and warns at synth while nobody is subscribed to it', () => {
    const topicId = logicalId(built.pipeline, built.pipeline.approvalTopic);
    expect(approvalAction(template).Configuration.NotificationArn).toEqual({ Ref: topicId });
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    const warnings = Annotations.fromStack(built.pipeline).findWarning(
      '*',
      Match.stringLikeRegexp(NO_APPROVER_WARNING),
    );
    expect(warnings.map((w) => w.id)).toEqual([`/${built.pipeline.node.path}/ApprovalTopic`]);
  });

  it('mails the approver the context names, without a warning', () => {
    const mailed = build({ 'pipeline:approvalEmail': 'release@example.com' });
    const t = Template.fromStack(mailed.pipeline);
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'release@example.com' });
    expect(
      Annotations.fromStack(mailed.pipeline).findWarning('*', Match.stringLikeRegexp(NO_APPROVER_WARNING)),
    ).toEqual([]);
  });
});

describe('the account-wide API Gateway logging role', () => {
  const declares = (app: PipelineApp) =>
    app.pipeline.stages.map(
      (s) => Object.keys(Template.fromStack(s.service).findResources('AWS::ApiGateway::Account')).length,
    );

  it('is declared by dev only when both stages share the pipeline account, so deploys do not flip it', () => {
    expect(declares(built)).toEqual([1, 0]);
  });

  it('is declared by each stage that deploys to an account of its own', () => {
    const crossAccount = build({
      'pipeline:account': '111111111111',
      'pipeline:region': 'eu-west-1',
      stages: { prod: { 'env:account': '222222222222', 'env:region': 'eu-west-1' } },
    });
    expect(declares(crossAccount)).toEqual([1, 1]);
  });
});
