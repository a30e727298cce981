import type { Environment } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ContextReader } from '#infra/config/context-reader.ts';
import { type DeploymentConfig, readConfig, readEnvironment } from '#infra/config/deployment-config.ts';

/** The repository the pipeline builds, reached through a CodeConnections (CodeStar) connection. */
export interface PipelineSource {
  /** ARN of a connection in AVAILABLE state (created in the console, then authorised there). */
  readonly connectionArn: string;
  /** `owner/name` of the repository. */
  readonly repository: string;
  /** Every push to this branch runs the pipeline. */
  readonly branch: string;
}

/**
 * The stages the pipeline deploys, in order. Production waits for a manual approval; dev goes
 * out on every push to the branch.
 */
export const PIPELINE_STAGES = [
  { stage: 'dev', approval: false },
  { stage: 'prod', approval: true },
] as const;

/** Stack name of the pipeline. */
export const PIPELINE_STACK_NAME = 'wallet-catalog-pipeline';

/** What the pipeline stack takes from context. */
export interface PipelineConfig {
  readonly source: PipelineSource;
  /** Where the pipeline itself runs; required once a stage names its own account. */
  readonly env: Environment | undefined;
  readonly stages: readonly { readonly config: DeploymentConfig; readonly approval: boolean }[];
  /** Who the manual approvals notify. */
  readonly approvalEmail: string | undefined;
}

/**
 * The API Gateway CloudWatch Logs role is a setting of the account and region, not of an API:
 * only the first stage deployed to an environment declares it. Stages without an explicit
 * environment all deploy where the pipeline is, so they share one.
 */
function withOneAccountLogRole<T extends { readonly config: DeploymentConfig }>(stages: T[]): T[] {
  const declared = new Set<string>();
  return stages.map((stage) => {
    const { env } = stage.config;
    const where = env === undefined ? 'pipeline' : `${env.account}/${env.region}`;
    const first = !declared.has(where);
    declared.add(where);
    return { ...stage, config: { ...stage.config, declaresAccountLogRole: first } };
  });
}

/**
 * Reads the {@link PipelineConfig}, or `undefined` when `pipeline:connectionArn` is empty: no
 * connection, no pipeline.
 */
export function readPipelineConfig(scope: IConstruct): PipelineConfig | undefined {
  const context = new ContextReader(scope);
  const connectionArn = context.optionalString(
    'pipeline:connectionArn',
    /^arn:aws[a-z-]*:(codestar-connections|codeconnections):[a-z0-9-]+:\d{12}:connection\/[0-9a-f-]+$/,
  );
  if (connectionArn === undefined) return undefined;
  const env = readEnvironment(context, 'pipeline:account', 'pipeline:region');
  const stages = withOneAccountLogRole(
    PIPELINE_STAGES.map(({ stage, approval }) => ({ config: readConfig(scope, stage), approval })),
  );
  if (env === undefined && stages.some(({ config }) => config.env !== undefined)) {
    throw new Error(
      'CDK context "pipeline:account" and "pipeline:region" must be set when a stage sets "env:account": a pipeline deploying across environments needs to know its own',
    );
  }
  return {
    source: {
      connectionArn,
      // owner/name on GitHub and Bitbucket; GitLab groups may nest.
      repository: context.string('pipeline:repository', /^[\w.-]+(\/[\w.-]+)+$/),
      branch: context.string('pipeline:branch', /^\S+$/),
    },
    env,
    stages,
    approvalEmail: context.optionalString('pipeline:approvalEmail', /^[^@\s]+@[^@\s]+\.[^@\s]+$/),
  };
}
