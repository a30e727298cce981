import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '#infra/app.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };

// cdk-nag 3 is a policy-validation plugin rather than an Aspect: it reports violations from
// validate() instead of annotations, and suppressions are CDK's own Validations.acknowledge().

const outdirs: string[] = [];
afterEach(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function build() {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-nag-test-'));
  outdirs.push(outdir);
  return createApp({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
}

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

describe('cdk-nag AwsSolutions', () => {
  it('leaves no unacknowledged error or warning in either stack', () => {
    const { app } = build();
    expect(findings(app)).toEqual([]);
  });

  // The first synth of a worker starts CloudFormation validation's WASM engine: seconds, once.
  it('runs as part of synthesis, so a new finding fails `cdk synth`', { timeout: 60_000 }, () => {
    const clean = build();
    expect(() => clean.app.synth()).not.toThrow();

    const { app, service } = build();
    new Queue(service, 'UnencryptedTransportQueue');
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
    const stackPaths = new Set(app.node.children.filter(Stack.isStack).map((stack) => stack.node.path));
    for (const { path, id } of acknowledgements(app)) {
      expect(path, id).not.toBe(app.node.path);
      expect(stackPaths.has(path), `${id} at ${path}`).toBe(false);
    }
  });

  describe('without the acknowledgements', () => {
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
      expect([...new Set(raw.map((finding) => finding.split(' ')[1]))].sort()).toEqual([
        'AwsSolutions-APIG2',
        'AwsSolutions-APIG3',
        'AwsSolutions-APIG4',
        'AwsSolutions-COG4',
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        'AwsSolutions-IAM5[Resource::*]',
      ]);
    });
  });
});
