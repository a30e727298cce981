import type { CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { createServiceApp, type ServiceApp } from '#infra/app.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };

export type Json = Record<string, unknown>;

/** cdk.json's context, with `overrides`, and without asset bundling (bundling.test.ts covers that). */
export const testContext = (overrides: Json = {}): Json => ({
  ...cdkJson.context,
  'aws:cdk:bundling-stacks': [],
  ...overrides,
});

/** The service app as `cdk synth` builds it from cdk.json (the dev stage, with its `stages.dev` overrides). */
export const buildServiceApp = (overrides: Json = {}): ServiceApp =>
  createServiceApp({ context: testContext(overrides) });

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
