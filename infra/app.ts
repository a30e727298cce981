import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readConfig } from '#infra/config/deployment-config.ts';
import { PIPELINE_STACK_NAME, readPipelineConfig } from '#infra/config/pipeline-config.ts';
import { PipelineStack } from '#infra/pipeline/pipeline-stack.ts';
import type { ServiceStack } from '#infra/stacks/service-stack.ts';
import { createServiceStacks } from '#infra/stacks/service-stage.ts';
import type { StatefulStack } from '#infra/stacks/stateful-stack.ts';

/** Checks every stack of the app, in every stage, with cdk-nag's AWS Solutions rules during synth. */
function addChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

/** The stacks of one stage, synthesized on their own. */
export interface ServiceApp {
  readonly app: App;
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;
}

/** The pipeline, which holds the stages it deploys. */
export interface PipelineApp {
  readonly app: App;
  readonly pipeline: PipelineStack;
}

function buildServiceApp(app: App): ServiceApp {
  const stacks = createServiceStacks(app, readConfig(app));
  addChecks(app);
  return { app, ...stacks };
}

function buildPipelineApp(app: App): PipelineApp {
  const config = readPipelineConfig(app);
  if (!config)
    throw new Error('CDK context "pipeline:connectionArn" is empty: there is no pipeline to build');
  const pipeline = new PipelineStack(app, PIPELINE_STACK_NAME, {
    description: 'Wallet catalog: CI/CD pipeline (CodePipeline) deploying dev, then prod after approval',
    tags: { project: 'wallet-catalog' },
    env: config.env,
    source: config.source,
    stages: config.stages,
    approvalEmail: config.approvalEmail,
  });
  addChecks(app);
  return { app, pipeline };
}

/**
 * The stacks of the stage the `stage` context names (stateful and service), environment-agnostic
 * unless the stage sets an account, so that synth needs neither credentials nor lookups. For
 * sandboxes and for a first look: `cdk deploy -c stage=alice --all`.
 */
export function createServiceApp(props: AppProps = {}): ServiceApp {
  return buildServiceApp(new App(props));
}

/** The pipeline stack, with the stages it deploys inside it. */
export function createPipelineApp(props: AppProps = {}): PipelineApp {
  return buildPipelineApp(new App(props));
}

/**
 * What `cdk synth` builds. With `pipeline:connectionArn` set, only the pipeline: the stages'
 * stacks exist inside it and are deployed by it, and a second, top-level copy of them would fight
 * it for the same stack names. Without, the stacks of the `stage` context, so the app works
 * before any pipeline exists and for sandboxes (`-c pipeline:connectionArn=` switches back).
 */
export function createApp(props: AppProps = {}): ServiceApp | PipelineApp {
  const app = new App(props);
  return readPipelineConfig(app) ? buildPipelineApp(app) : buildServiceApp(app);
}

if (import.meta.main) {
  createApp().app.synth();
}
