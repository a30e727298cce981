import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { CALLER_RATE_KEY_TRANSFORMATIONS } from '#infra/caller-rate-key.ts';
import type { CallerRateLimit } from '#infra/environment.ts';
import { problemType } from '#shared/http/problem.ts';

/** Properties of a {@link CallerRateLimitAcl}. */
export interface CallerRateLimitAclProps {
  /** The API stage the web ACL protects. */
  readonly stage: Stage;
  readonly stageName: string;
  readonly limit: CallerRateLimit;
}

/** Key of the 429 body in the web ACL's custom response bodies. */
const RATE_LIMITED_BODY = 'caller-rate-limited';

/** The rule of the AWS managed common rule set that counts instead of blocking, and why. */
export const COUNTED_MANAGED_RULES = {
  // A valid pet reaches ~40 kB (20 photo URLs of up to 2,048 characters): the schemas bound every
  // field, and the functions answer oversized input with problem+json themselves.
  SizeRestrictions_BODY: 'a valid pet body may exceed the rule set 8 kB body limit',
} as const;

/**
 * The problem document AWS WAF answers a rate-limited caller with. WAF sends custom bodies as
 * text/plain, text/html or application/json only, so the content type is application/json; the
 * body is the same problem shape as every other error of the API.
 */
export function callerRateLimitProblem(limit: CallerRateLimit): string {
  return JSON.stringify({
    type: problemType('throttled'),
    title: 'Too many requests',
    status: 429,
    detail: `This access token made more than ${limit.limit} requests in ${limit.windowSeconds} seconds; retry after the Retry-After seconds`,
  });
}

/**
 * An AWS WAF web ACL on the API stage: a per-caller rate limit keyed on the Authorization header
 * (the bearer token, so one caller cannot use up the stage-wide throttle everyone shares),
 * normalised so that every spelling of one token is one key (`#infra/caller-rate-key.ts`), and the
 * AWS managed common rule set. Requests without the header (the public OpenAPI route) are not
 * counted by the rate rule; the stage throttle bounds them.
 */
export class CallerRateLimitAcl extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: CallerRateLimitAclProps) {
    super(scope, id);
    const name = `wallet-catalog-${props.stageName}`;
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(name),
      customResponseBodies: {
        [RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: callerRateLimitProblem(props.limit),
        },
      },
      rules: [
        {
          name: 'CallerRateLimit',
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: props.limit.limit,
              evaluationWindowSec: props.limit.windowSeconds,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [
                {
                  header: {
                    name: 'authorization',
                    textTransformations: CALLER_RATE_KEY_TRANSFORMATIONS.map((type, priority) => ({
                      priority,
                      type,
                    })),
                  },
                },
              ],
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: RATE_LIMITED_BODY,
                // WAF re-evaluates over a sliding window; a full window is when the count surely fell.
                responseHeaders: [{ name: 'Retry-After', value: String(props.limit.windowSeconds) }],
              },
            },
          },
          visibilityConfig: visibility(`${name}-caller-rate-limit`),
        },
        {
          name: 'AwsCommonRuleSet',
          priority: 1,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              ruleActionOverrides: Object.keys(COUNTED_MANAGED_RULES).map((rule) => ({
                name: rule,
                actionToUse: { count: {} },
              })),
            },
          },
          visibilityConfig: visibility(`${name}-common-rule-set`),
        },
      ],
    });
    // The stage ARN refers to the stage resource, so CloudFormation associates it once it exists.
    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
