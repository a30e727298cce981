import type { CfnOutput } from 'aws-cdk-lib';
import { ShellStep } from 'aws-cdk-lib/pipelines';
import { type Route, routeOf, routes } from '#shared/routes.ts';

/**
 * Stands in for every path parameter. API Gateway routes any value to the method, and the
 * authorizer answers before a function could validate it; a number is valid for every parameter
 * this API has (petId is an int64) should that ever change.
 */
export const PATH_PARAMETER_EXAMPLE = '1';

/** One request of the smoke test and the status it must get. */
export interface SmokeCheck {
  readonly method: Route['method'];
  /** Path below the stage URL, path parameters substituted. */
  readonly path: string;
  readonly status: number;
}

/** `path` with {@link PATH_PARAMETER_EXAMPLE} for each `{parameter}`. */
export function examplePath(path: string): string {
  return path.replace(/\{[^/}]+\}/g, PATH_PARAMETER_EXAMPLE);
}

/**
 * What a freshly deployed stage must answer, from the route table: the OpenAPI document is
 * public, and every route with scopes turns a request without a token away with 401.
 */
export function smokeChecks(): SmokeCheck[] {
  const openApi = routeOf('getOpenApi');
  const routeTable: readonly Route[] = routes;
  return [
    { method: openApi.method, path: openApi.path, status: 200 },
    ...routeTable
      .filter((route) => route.scopes !== null)
      .map((route) => ({ method: route.method, path: examplePath(route.path), status: 401 })),
  ];
}

/** Where mismatches collect, so that one run reports all of them rather than the first. */
const FAILURES = 'smoke-test-failures.txt';

/**
 * The smoke test as POSIX sh commands, one line per check (CodeBuild runs the lines in one
 * shell). Reads the stage URL from `API_URL` and exits non-zero if any answer differs.
 * Transport errors and 5xx are retried a few times, for a stage deployed seconds ago.
 */
export function smokeTestCommands(checks: readonly SmokeCheck[] = smokeChecks()): string[] {
  return [
    `test -n "\${API_URL:-}" || { echo 'API_URL is not set' >&2; exit 1; }`,
    `rm -f ${FAILURES}`,
    ...checks.map(({ method, path, status }) => {
      const request = `${method} ${path}`;
      return [
        `code=$(curl --silent --show-error --output /dev/null --write-out '%{http_code}' --max-time 10 --retry 4 --retry-delay 3 --retry-all-errors --request ${method} "\${API_URL%/}${path}")`,
        `echo "${request} -> $code (expected ${status})"`,
        `[ "$code" = "${status}" ] || echo "${request} answered $code, expected ${status}" >> ${FAILURES}`,
      ].join('; ');
    }),
    `if [ -s ${FAILURES} ]; then echo 'Smoke test failed:' >&2; cat ${FAILURES} >&2; exit 1; fi`,
    `echo "Smoke test passed: ${checks.length} checks against $API_URL"`,
  ];
}

/** The pipeline step that runs the smoke test against a stage once it is deployed. */
export function smokeTestStep(stageName: string, apiUrl: CfnOutput): ShellStep {
  return new ShellStep(`SmokeTest-${stageName}`, {
    envFromCfnOutputs: { API_URL: apiUrl },
    commands: smokeTestCommands(),
  });
}
