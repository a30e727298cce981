import type { CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { createPipelineApp, createServiceApp, type PipelineApp, type ServiceApp } from '#infra/app.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };

export type Json = Record<string, unknown>;

/**
 * cdk.json's context, with `overrides`, and without asset bundling (bundling.test.ts covers that).
 * Prod requires an alarm subscriber and cdk.json names none, so the tests acknowledge it, as an
 * operator whose pager is subscribed by hand would (service-posture.test.ts checks the refusal).
 */
export const testContext = (overrides: Json = {}): Json => ({
  ...cdkJson.context,
  'aws:cdk:bundling-stacks': [],
  'alarms:noSubscriberReason': NO_SUBSCRIBER_IN_TESTS,
  ...overrides,
});

/** What the tests give as the reason prod has no alarm subscriber. */
export const NO_SUBSCRIBER_IN_TESTS = 'tests: nothing is deployed';

/** The service app as `cdk synth` builds it from cdk.json (the dev stage, with its `stages.dev` overrides). */
export const buildServiceApp = (overrides: Json = {}): ServiceApp =>
  createServiceApp({ context: testContext(overrides) });

/** A CodeConnections connection ARN, the one context value that makes `cdk synth` build the pipeline. */
export const PIPELINE_CONNECTION_ARN =
  'arn:aws:codeconnections:eu-west-1:123456789012:connection/0b0c1d2e-1111-2222-3333-444455556666';

/** The app as `cdk synth` builds it once cdk.json names a connection, minus asset bundling. */
export const buildPipelineApp = (overrides: Json = {}): PipelineApp =>
  createPipelineApp({
    context: testContext({ 'pipeline:connectionArn': PIPELINE_CONNECTION_ARN, ...overrides }),
  });

/** The service app and the templates of its two stacks. */
export function synthesize(overrides: Json = {}): {
  built: ServiceApp;
  service: Template;
  stateful: Template;
} {
  const built = buildServiceApp(overrides);
  return { built, service: Template.fromStack(built.service), stateful: Template.fromStack(built.stateful) };
}

/** The CloudFormation logical id of a construct's resource in its stack. */
export const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);
