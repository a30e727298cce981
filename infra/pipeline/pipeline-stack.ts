import { readFileSync } from 'node:fs';
import {
  Annotations,
  ArnFormat,
  type CfnElement,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { BuildSpec, ComputeType, LinuxBuildImage, Project } from 'aws-cdk-lib/aws-codebuild';
import { AccountPrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { CodePipeline, CodePipelineSource, ManualApprovalStep, ShellStep } from 'aws-cdk-lib/pipelines';
import type { Construct } from 'constructs';
import { LOCK_FILE } from '#infra/bundling.ts';
import type { DeploymentConfig } from '#infra/config/deployment-config.ts';
import type { PipelineSource } from '#infra/config/pipeline-config.ts';
import { probeFunctionName } from '#infra/constructs/synthetic-probe.ts';
import { smokeTestStep } from '#infra/pipeline/smoke-test.ts';
import { ServiceStage } from '#infra/stacks/service-stage.ts';

/** Properties of the {@link PipelineStack}. */
export interface PipelineStackProps extends StackProps {
  readonly source: PipelineSource;
  /** The stages in deployment order; `approval` makes one wait for a person first. */
  readonly stages: readonly { readonly config: DeploymentConfig; readonly approval: boolean }[];
  /** Who is asked to approve a promotion; without one, a synth-time warning says nobody is. */
  readonly approvalEmail?: string | undefined;
}

/** The id of the warning a pipeline whose approvals notify nobody gets at synth. */
export const NO_APPROVER_WARNING = 'wallet-catalog:no-approver';

/**
 * Ubuntu 24.04 `aws/codebuild/standard:8.0`, the current x86_64 standard image: it carries
 * Node.js 24 and Corretto 17/21/25 as selectable runtimes, curl for the smoke tests, and is
 * cached on CodeBuild hosts (quick to provision). x86_64 rather than Graviton although the
 * functions run on arm64: esbuild output does not depend on the build host, and the Amazon Linux
 * ARM images offer fewer runtime versions to pin.
 */
export const BUILD_IMAGE = LinuxBuildImage.STANDARD_8_0;

/**
 * Pinned rather than left to the image's defaults, which move when a version reaches end of
 * life. `npm ci` installs Node 24 for the scripts anyway (the `node` devDependency); the image's
 * own has to match for npm itself. Java is DynamoDB Local's, for `npm test`.
 */
export const RUNTIME_VERSIONS = { nodejs: '24', java: 'corretto21' } as const;

/** What the synth step runs: the whole test suite gates every deployment. */
export const SYNTH_COMMANDS = ['npm ci', 'npm test', 'npx cdk synth'] as const;

/** The version package-lock.json pins for a package. */
function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as {
    packages?: Record<string, { version?: string }>;
  };
  const version = lock.packages?.[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in ${LOCK_FILE}`);
  return version;
}

/**
 * The CI/CD pipeline (CDK Pipelines on CodePipeline V2): source from the connection, a synth
 * step that installs, tests and synthesizes, self-mutation, then each stage in order, each
 * followed by a smoke test against its API and a run of its synthetic probe, production behind a
 * manual approval.
 */
export class PipelineStack extends Stack {
  readonly pipeline: CodePipeline;
  /** The deployed stages, in order. */
  readonly stages: readonly ServiceStage[];
  /** Where a manual approval announces itself. */
  readonly approvalTopic: Topic;

  constructor(scope: Construct, id: string, props: PipelineStackProps) {
    super(scope, id, props);
    this.pipeline = new CodePipeline(this, 'Pipeline', {
      pipelineName: id,
      // A customer managed key ($1 a month) for the artifacts: what lets stages live in other
      // accounts, and it encrypts every CodeBuild project's output too (cdk-nag CB4).
      crossAccountKeys: true,
      enableKeyRotation: true,
      // Self-mutation runs the CLI the synth step used, and asset publishing (which uploads the
      // code prod runs) the cdk-assets package-lock.json pins, not whatever is newest on npm.
      cliVersion: lockedVersion('aws-cdk'),
      cdkAssetsCliVersion: lockedVersion('cdk-assets'),
      synth: new ShellStep('Synth', {
        input: CodePipelineSource.connection(props.source.repository, props.source.branch, {
          connectionArn: props.source.connectionArn,
        }),
        commands: [
          ...SYNTH_COMMANDS,
          // The pipeline is only synthesized when cdk.json names the connection; set on the
          // command line alone, self-mutation would find no pipeline and fail obscurely.
          `test -f cdk.out/${id}.template.json || { echo "cdk.out has no ${id}: commit pipeline:connectionArn to cdk.json" >&2; exit 1; }`,
        ],
        primaryOutputDirectory: 'cdk.out',
      }),
      codeBuildDefaults: {
        buildEnvironment: { buildImage: BUILD_IMAGE },
        partialBuildSpec: BuildSpec.fromObject({
          phases: { install: { 'runtime-versions': { nodejs: RUNTIME_VERSIONS.nodejs } } },
        }),
      },
      synthCodeBuildDefaults: {
        // DynamoDB Local (a JVM), vitest workers and esbuild side by side: 4 vCPU, 7 GB.
        buildEnvironment: { computeType: ComputeType.MEDIUM },
        partialBuildSpec: BuildSpec.fromObject({
          phases: { install: { 'runtime-versions': { java: RUNTIME_VERSIONS.java } } },
        }),
        timeout: Duration.minutes(30),
      },
    });

    this.approvalTopic = new Topic(this, 'ApprovalTopic', {
      displayName: 'wallet-catalog pipeline approvals',
      // The AWS-managed key: the pipeline role publishes as an IAM principal, which that key allows.
      masterKey: Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    if (props.approvalEmail) this.approvalTopic.addSubscription(new EmailSubscription(props.approvalEmail));
    else {
      Annotations.of(this.approvalTopic).addWarningV2(
        NO_APPROVER_WARNING,
        'Production approvals notify nobody: set "pipeline:approvalEmail" in cdk.json, or subscribe someone to the approval topic.',
      );
    }

    this.stages = props.stages.map(({ config, approval }) => {
      const stage = new ServiceStage(this, config.stage, { config });
      // Before addStage, which synthesizes the stage: its stacks are final from then on.
      this.#letPipelineInvokeProbe(stage, config);
      this.pipeline.addStage(stage, {
        // Between the stateful stack's change set and its execution, so that the approver can read
        // what would change in the tables, keys and alarm topic; before it, in `pre`, there was no
        // change set yet. Nothing deploys before the approval: the service stack waits for this one.
        stackSteps: approval
          ? [
              {
                stack: stage.stateful,
                changeSet: [
                  new ManualApprovalStep(`PromoteTo-${config.stage}`, {
                    comment: `Deploy to ${config.stage}? The previous stage passed its smoke test; check its dashboard and alarms, and the change set of ${stage.stateful.stackName} (CloudFormation console), first.`,
                    notificationTopic: this.approvalTopic,
                  }),
                ],
              },
            ]
          : [],
        post: [
          smokeTestStep(config.stage, stage.service.apiUrlOutput, {
            functionArn: this.#probeArn(config),
            functionArnOutput: stage.service.probe.functionArnOutput,
          }),
        ],
      });
      return stage;
    });
    // Built now rather than at synth, so that its CodeBuild projects and roles exist to be checked.
    this.pipeline.buildPipeline();
    // The bucket is retained with the pipeline's history; a deleted key would leave it unreadable.
    this.pipeline.pipeline.artifactBucket.encryptionKey?.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.#acknowledgeGeneratedFindings();
  }

  /**
   * The ARN of a stage's probe function, known before the stage exists: its fixed name in the
   * stage's account and region, which are the pipeline's own when the stage names none.
   */
  #probeArn(config: DeploymentConfig): string {
    return this.formatArn({
      service: 'lambda',
      account: config.env?.account ?? this.account,
      region: config.env?.region ?? this.region,
      resource: 'function',
      resourceName: probeFunctionName(config.stage),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  /**
   * A stage in another account must also let the pipeline's account invoke its probe (a policy on
   * the function); which role of that account may do so is then up to the pipeline account's own
   * policies, where only the stage's smoke test is granted it.
   */
  #letPipelineInvokeProbe(stage: ServiceStage, config: DeploymentConfig): void {
    const account = config.env?.account;
    if (account === undefined || account === this.account) return;
    stage.service.probe.function.function.addPermission('InvokedByPipeline', {
      principal: new AccountPrincipal(this.account),
      action: 'lambda:InvokeFunction',
    });
  }

  /**
   * What cdk-nag finds in the roles and bucket CDK Pipelines generates, each acknowledged where it
   * arises. None of it is policy this stack writes: the alternative to acknowledging it would be
   * replacing CDK Pipelines.
   */
  #acknowledgeGeneratedFindings(): void {
    const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
      this.getLogicalId(construct.node.defaultChild as CfnElement);
    const artifactBucket = this.pipeline.pipeline.artifactBucket;
    // Findings name ARNs as cdk-nag renders them: pseudo parameters unless the stack's env is explicit.
    const [partition, region, account] = (
      [
        [this.partition, 'AWS::Partition'],
        [this.region, 'AWS::Region'],
        [this.account, 'AWS::AccountId'],
      ] as const
    ).map(([value, pseudo]) => (Token.isUnresolved(value) ? `<${pseudo}>` : value));
    const arn = (service: string) => `arn:${partition}:${service}:${region}:${account}`;

    const acknowledge = (scope: Construct, reason: string, ...findings: string[]) => {
      for (const finding of findings)
        Validations.of(scope).acknowledge({ id: `AwsSolutions-${finding}`, reason });
    };

    acknowledge(
      this.pipeline,
      "CDK Pipelines grants its roles read (and the pipeline write) access to the pipeline's own artifact bucket with the S3 action groups of Bucket.grantRead/grantReadWrite; the wildcards range over that one bucket's objects and actions.",
      'IAM5[Action::s3:GetObject*]',
      'IAM5[Action::s3:GetBucket*]',
      'IAM5[Action::s3:List*]',
      'IAM5[Action::s3:DeleteObject*]',
      'IAM5[Action::s3:Abort*]',
      `IAM5[Resource::<${logicalId(artifactBucket)}.Arn>/*]`,
    );
    acknowledge(
      this.pipeline,
      "CDK Pipelines grants its roles use of the artifact bucket's own KMS key with Key.grantEncryptDecrypt; the wildcards are variants of those operations on that one key.",
      'IAM5[Action::kms:GenerateDataKey*]',
      'IAM5[Action::kms:ReEncrypt*]',
    );
    acknowledge(
      this.pipeline,
      'A manual approval publishes to the approval topic, encrypted with the AWS-managed SNS key, whose key id is not known at synth: the grant names key/* under the condition kms:ResourceAliases = alias/aws/sns, so it reaches that one key.',
      `IAM5[Resource::arn:${partition}:kms:${region}:${account}:key/*]`,
    );
    acknowledge(
      artifactBucket,
      'The artifact bucket holds build outputs only, is encrypted with its own key, refuses plain HTTP, and is reached only through the pipeline roles; CloudTrail records that access, and an access-log bucket would need exempting from this rule in turn.',
      'S1',
    );

    // Projects with a role of their own may write only their own log group and report groups.
    for (const project of this.node.findAll().filter((c): c is Project => c instanceof Project)) {
      if (!project.role || !project.node.tryFindChild('Role')) continue;
      acknowledge(
        project,
        "A CodeBuild project's role is granted its own log streams and report groups, whose names CodeBuild derives from the project name; the wildcard is what follows that name.",
        `IAM5[Resource::${arn('logs')}:log-group:/aws/codebuild/<${logicalId(project)}>:*]`,
        `IAM5[Resource::${arn('codebuild')}:report-group/<${logicalId(project)}>-*]`,
      );
    }

    acknowledge(
      this.pipeline.selfMutationProject,
      'Self-mutation runs `cdk deploy` of this stack: it may assume only the bootstrap roles (the condition requires their aws-cdk:bootstrap-role tag; their region is not known at synth), and cloudformation:DescribeStacks and s3:ListBucket for the bootstrap lookups.',
      `IAM5[Resource::arn:*:iam::${account}:role/*]`,
      'IAM5[Resource::*]',
    );

    const fileRole = this.pipeline.node.tryFindChild('Assets')?.node.tryFindChild('FileRole');
    if (fileRole) {
      acknowledge(
        fileRole,
        'One role serves every asset-publishing project CDK Pipelines generates (one per asset, as many as the code has), so it is granted CodeBuild logs, reports and builds of any project; what it may publish is bounded by the one bootstrap file-publishing role it can assume.',
        `IAM5[Resource::${arn('logs')}:log-group:/aws/codebuild/*]`,
        `IAM5[Resource::${arn('codebuild')}:report-group/*]`,
        'IAM5[Resource::*]',
      );
    }
  }
}
