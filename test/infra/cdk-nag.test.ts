import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPipelineApp, createServiceApp } from '#infra/app.ts';
import { testContext } from '../support/cdk.ts';

// cdk-nag 3 is a policy-validation plugin rather than an Aspect: it reports violations from
// validate() instead of annotations, and suppressions are CDK's own Validations.acknowledge().

const outdirs: string[] = [];
afterEach(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function context() {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-nag-test-'));
  outdirs.push(outdir);
  return { outdir, context: testContext() };
}

/**
 * An app as `cdk synth` builds it, and a stack of it to plant a violation in: not one inside a
 * pipeline stage, whose assembly the pipeline has already synthesized.
 */
interface Built {
  readonly app: App;
  readonly stack: Stack;
}

const CONNECTION_ARN =
  'arn:aws:codeconnections:eu-west-1:123456789012:connection/0b0c1d2e-1111-2222-3333-444455556666';

/** Both things `cdk synth` can build, each checked on its own. */
const apps: [string, () => Built][] = [
  [
    'the stage stacks',
    () => {
      const { app, service } = createServiceApp(context());
      return { app, stack: service };
    },
  ],
  [
    'the pipeline and the stages inside it',
    () => {
      const props = context();
      const { app, pipeline } = createPipelineApp({
        ...props,
        context: { ...props.context, 'pipeline:connectionArn': CONNECTION_ARN },
      });
      return { app, stack: pipeline };
    },
  ],
];

/** The kinds of finding each app raises before acknowledgements: new kinds must be a decision. */
const SERVICE_FINDINGS = [
  'AwsSolutions-APIG2',
  'AwsSolutions-APIG4',
  'AwsSolutions-COG4',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
  'AwsSolutions-IAM5[Resource::*]',
  // The credit poster's failure queue, a destination rather than a queue with consumers.
  'AwsSolutions-SQS3',
  // The image functions' grants on the objects under the images prefix, and the images bucket's
  // access logs (the API's access log records every image request).
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::wallet-catalog-dev-images-<AWS::AccountId>-<AWS::Region>/pets/*]',
  'AwsSolutions-S1',
  // The ledger audit's state machine: its two functions' versions, its map's child executions,
  // and each function's grant on the objects under the partials prefix.
  'AwsSolutions-IAM5[Resource::<LedgerAuditFunctionD0F22BA7.Arn>:*]',
  'AwsSolutions-IAM5[Resource::<LedgerAuditPartialsA9CFEC71.Arn>/audit-partials/*]',
  'AwsSolutions-IAM5[Resource::<LedgerAuditSegmentFunction5336D530.Arn>:*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"LedgerAuditStateMachine71C15072"}]}]}/*:*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"LedgerAuditStateMachine71C15072"}]}]}:*]',
];
const PIPELINE_FINDINGS = [
  ...SERVICE_FINDINGS,
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::wallet-catalog-prod-images-<AWS::AccountId>-<AWS::Region>/pets/*]',
  // Production's AWS Backup plan of the ledger.
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores]',
  'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
  'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
  'AwsSolutions-IAM5[Action::s3:Abort*]',
  'AwsSolutions-IAM5[Action::s3:DeleteObject*]',
  'AwsSolutions-IAM5[Action::s3:GetBucket*]',
  'AwsSolutions-IAM5[Action::s3:GetObject*]',
  'AwsSolutions-IAM5[Action::s3:List*]',
  'AwsSolutions-IAM5[Resource::<PipelineArtifactsBucketAEA9A052.Arn>/*]',
  'AwsSolutions-IAM5[Resource::arn:*:iam::<AWS::AccountId>:role/*]',
  // The approval topic's AWS-managed key.
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:codebuild:<AWS::Region>:<AWS::AccountId>:report-group/*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:codebuild:<AWS::Region>:<AWS::AccountId>:report-group/<project>-*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/codebuild/*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/codebuild/<project>:*]',
];

/** Each unacknowledged finding as `rule at construct path`, errors and warnings alike. */
function findings(scope: IConstruct): string[] {
  return new AwsSolutionsChecks()
    .validateScope(scope)
    .violations.flatMap((violation) =>
      violation.violatingResources.map(
        (resource) => `${violation.severity} ${violation.ruleName} at ${resource.constructPath}`,
      ),
    );
}

interface Acknowledgement {
  readonly path: string;
  readonly id: string;
  readonly reason: string;
}

/** Every acknowledgement recorded anywhere in the tree. */
function acknowledgements(scope: IConstruct): Acknowledgement[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

describe.each([
  [apps[0]?.[0], apps[0]?.[1], SERVICE_FINDINGS],
  [apps[1]?.[0], apps[1]?.[1], PIPELINE_FINDINGS],
] as [string, () => Built, string[]][])('cdk-nag AwsSolutions on %s', (_, build, expectedFindings) => {
  it('leaves no unacknowledged error or warning in any stack', () => {
    const { app } = build();
    expect(findings(app)).toEqual([]);
  });

  // The first synth of a worker starts CloudFormation validation's WASM engine: seconds, once.
  it('runs as part of synthesis, so a new finding fails `cdk synth`', { timeout: 60_000 }, () => {
    const clean = build();
    expect(() => clean.app.synth()).not.toThrow();

    const { app, stack } = build();
    new Queue(stack, 'UnencryptedTransportQueue');
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });

  it('acknowledges only AwsSolutions rules, each with a reason that explains it', () => {
    const found = acknowledgements(build().app);
    expect(found.length).toBeGreaterThan(0);
    for (const { path, id, reason } of found) {
      expect(id, path).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expect(reason.length, `${id} at ${path}: "${reason}"`).toBeGreaterThanOrEqual(60);
    }
  });

  it('acknowledges on resources, never on the app or a whole stack', () => {
    const { app } = build();
    const stackPaths = new Set(
      app.node
        .findAll()
        .filter(Stack.isStack)
        .map((stack) => stack.node.path),
    );
    for (const { path, id } of acknowledgements(app)) {
      expect(path, id).not.toBe(app.node.path);
      expect(stackPaths.has(path), `${id} at ${path}`).toBe(false);
    }
  });

  describe('without the acknowledgements', () => {
    it('fails synthesis on findings in any stack, those inside pipeline stages included', {
      timeout: 60_000,
    }, () => {
      vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => undefined);
      const { app } = build();
      vi.restoreAllMocks();
      expect(() => app.synth()).toThrow(/wallet-catalog-(dev|prod)-service\/Api/);
    });

    it('each acknowledgement silences a finding that really occurs at or below it', () => {
      const acknowledged = acknowledgements(build().app);
      vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => undefined);
      const raw = findings(build().app);
      vi.restoreAllMocks();

      for (const { path, id } of acknowledged) {
        const matching = raw.filter((finding) => {
          const [, rule, , at] = finding.split(' ');
          return rule === id && (at === path || at?.startsWith(`${path}/`));
        });
        expect(matching, `${id} at ${path} acknowledges nothing`).not.toEqual([]);
      }
      // And the full list, so that a new kind of finding is a decision rather than an accident.
      // A CodeBuild project's own log and report groups carry its logical id: one kind for all.
      const kinds = raw.map((finding) => finding.split(' ')[1]?.replace(/\/<Pipeline\w+>/, '/<project>'));
      expect([...new Set(kinds)].sort()).toEqual([...expectedFindings].sort());
    });
  });
});
