import { ArnFormat, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ProbeSettings } from '#infra/config/deployment-config.ts';
import { ProjectFunction } from '#infra/constructs/project-function.ts';

/** How often the probe runs: each run is one datapoint of its alarm. */
export const PROBE_INTERVAL = Duration.minutes(5);

/**
 * The probe function's name in a stage. Fixed rather than generated, because the pipeline grants
 * its post-deploy step the invocation of exactly this function, in a stack synthesized apart from
 * the stage's (a pipeline cannot reference a stage's resources).
 */
export const probeFunctionName = (stageName: string): string => `wallet-catalog-${stageName}-probe`;

/** Properties of a {@link SyntheticProbe}. */
export interface SyntheticProbeProps extends ProbeSettings {
  /** Base URL of the API stage. */
  readonly apiUrl: string;
  /** The scopes the probe's token asks for (those of its authorized read, with the stage's prefix). */
  readonly scope: string;
  readonly stageName: string;
  readonly logRetention: RetentionDays;
  readonly logLevel: ApplicationLogLevel;
}

/**
 * A scheduled Lambda function calling the API from outside, as a client does, every
 * {@link PROBE_INTERVAL}: so a total outage, which sends no requests and so breaches no
 * request-driven alarm, still raises one. Chosen over a CloudWatch Synthetics canary (about
 * $10 a month per stage at this rate, a Puppeteer/Playwright runtime and an artifact bucket) for
 * the price (cents a month) and because it is built, bundled and checked like every other function.
 */
export class SyntheticProbe extends Construct {
  readonly function: ProjectFunction;
  /** The function's ARN, as an output the pipeline's post-deploy step invokes it by. */
  readonly functionArnOutput: CfnOutput;

  constructor(scope: Construct, id: string, props: SyntheticProbeProps) {
    super(scope, id);
    this.function = new ProjectFunction(this, 'Probe', {
      functionDir: 'probe',
      functionName: probeFunctionName(props.stageName),
      description: 'Synthetic probe: the public OpenAPI route and one authorized read, as a client',
      environment: {
        PROBE_API_URL: props.apiUrl,
        PROBE_TOKEN_URL: props.tokenUrl,
        PROBE_SCOPE: props.scope,
        PROBE_CREDENTIALS_SECRET: props.credentialsSecretName,
        STAGE: props.stageName,
      },
      logRetention: props.logRetention,
      applicationLogLevel: props.logLevel,
    });
    // The secret is created out of band, never in the repository (docs/deploy.md, step 4 "Probe
    // identity"). Its value only: Secret.grantRead adds DescribeSecret (its metadata), which the
    // probe never calls. Secrets Manager appends six random characters to the name in the ARN.
    Grant.addToPrincipal({
      grantee: this.function.function,
      actions: ['secretsmanager:GetSecretValue'],
      resourceArns: [
        Stack.of(this).formatArn({
          service: 'secretsmanager',
          resource: 'secret',
          resourceName: `${props.credentialsSecretName}-??????`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    });
    this.functionArnOutput = new CfnOutput(this, 'FunctionArn', {
      description: 'The synthetic probe, which the pipeline invokes once the stage is deployed',
      value: this.function.function.functionArn,
    });
    // A stable name for scripts, like the API's ApiUrl, rather than one hashed from the path.
    this.functionArnOutput.overrideLogicalId('ProbeFunctionArn');
    new Rule(this, 'Schedule', {
      description: `Runs the wallet-catalog ${props.stageName} synthetic probe`,
      schedule: Schedule.rate(PROBE_INTERVAL),
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
  }
}
