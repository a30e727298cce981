import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';

/** Lambda refuses to reserve the last 100 concurrent executions of an account's quota. */
export const MIN_UNRESERVED_CONCURRENCY = 100;

/**
 * The concurrent executions the functions under `scope` reserve, all together. Read from the
 * synthesized functions, so it counts whatever reserves (a route, the authorizer, the dispatcher)
 * without a list of its own to keep in step.
 */
export function reservedConcurrencyOf(scope: IConstruct): number {
  return scope.node
    .findAll()
    .filter((construct): construct is CfnFunction => construct instanceof CfnFunction)
    .reduce(
      (sum, fn) =>
        sum + (typeof fn.reservedConcurrentExecutions === 'number' ? fn.reservedConcurrentExecutions : 0),
      0,
    );
}

/**
 * Fails synthesis when `scope` reserves more concurrency than the account can give: otherwise
 * CloudFormation finds out halfway through the deploy, rolling the stage back (Lambda keeps
 * {@link MIN_UNRESERVED_CONCURRENCY} of the quota unreserved, and every other function of the
 * account, other stages' included, shares what is left).
 */
export function requireConcurrencyBudget(scope: IConstruct, accountConcurrency: number): void {
  scope.node.addValidation({
    validate: () => {
      const reserved = reservedConcurrencyOf(scope);
      const available = accountConcurrency - MIN_UNRESERVED_CONCURRENCY;
      return reserved <= available
        ? []
        : [
            `The functions reserve ${reserved} concurrent executions, over the ${available} an account quota of ${accountConcurrency} (lambda:accountConcurrency) lets them reserve: lower lambda:reservedConcurrency, or raise the quota (Service Quotas) and lambda:accountConcurrency with it.`,
          ];
    },
  });
}
