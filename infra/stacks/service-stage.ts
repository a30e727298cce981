import { Stage, type StageProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DeploymentConfig } from '#infra/config/deployment-config.ts';
import { ServiceStack } from '#infra/stacks/service-stack.ts';
import { StatefulStack } from '#infra/stacks/stateful-stack.ts';

/** The two stacks of one stage. */
export interface ServiceStacks {
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;
}

/**
 * Adds the stacks of one stage to `scope` (the app, or a pipeline {@link ServiceStage}): the
 * stateful stack (tables, images bucket, alarm topic) handed to the stateless service stack as props. Both are
 * named `wallet-catalog-<stage>-…` wherever they are created, so a stage deployed by hand and the
 * same stage deployed by the pipeline are the same CloudFormation stacks.
 */
export function createServiceStacks(scope: Construct, config: DeploymentConfig): ServiceStacks {
  const tags = { project: 'wallet-catalog', stage: config.stage };
  const name = (part: string) => `wallet-catalog-${config.stage}-${part}`;
  const stateful = new StatefulStack(scope, name('stateful'), {
    stackName: name('stateful'),
    env: config.env,
    description: `Wallet catalog (${config.stage}): DynamoDB tables, images bucket and alarm topic`,
    tags,
    stageName: config.stage,
    deletionProtection: config.deletionProtection,
    alarmEmail: config.alarmEmail,
    alarmSubscriberRequired: config.alarmSubscriberRequired,
    alarmNoSubscriberReason: config.alarmNoSubscriberReason,
    backup: config.backup,
  });
  const service = new ServiceStack(scope, name('service'), {
    stackName: name('service'),
    env: config.env,
    description: `Wallet catalog (${config.stage}): REST API, authorizer, functions, alarms and dashboard`,
    tags,
    tables: stateful.tables,
    alarmTopic: stateful.alarmTopic,
    webhookSecretsKey: stateful.webhookSecretsKey,
    imagesBucket: stateful.imagesBucket,
    auth: config.auth,
    authorizerCacheTtl: config.authorizerCacheTtl,
    settings: config.settings,
    throttling: config.throttling,
    logRetention: config.logRetention,
    logLevel: config.logLevel,
    stageName: config.stage,
    callerRateLimit: config.callerRateLimit,
    allowTestInvoke: config.allowTestInvoke,
    reservedConcurrency: config.reservedConcurrency,
    accountConcurrency: config.accountConcurrency,
    declaresAccountLogRole: config.declaresAccountLogRole,
    probe: config.probe,
    adotLayerArn: config.adotLayerArn,
  });
  return { stateful, service };
}

/** Properties of a {@link ServiceStage}. */
export interface ServiceStageProps extends StageProps {
  readonly config: DeploymentConfig;
}

/** One stage of the pipeline: the stacks of {@link createServiceStacks}, deployed together. */
export class ServiceStage extends Stage {
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;

  constructor(scope: Construct, id: string, props: ServiceStageProps) {
    super(scope, id, props);
    const stacks = createServiceStacks(this, props.config);
    this.stateful = stacks.stateful;
    this.service = stacks.service;
  }
}
