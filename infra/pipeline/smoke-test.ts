import type { CfnOutput } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CodeBuildStep } from 'aws-cdk-lib/pipelines';
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

/** How often the probe is invoked before the stage fails, and how long apart. */
export interface ProbeRetry {
  readonly attempts: number;
  readonly delaySeconds: number;
}

/**
 * Three runs 10 s apart: the first run after a deploy meets cold functions (the authorizer fetching
 * its JWKS, the balance read) against the probe's 2.5 s per request, which a healthy stage can
 * miss once; a stage that fails three times in half a minute is broken.
 */
export const PROBE_RETRY: ProbeRetry = { attempts: 3, delaySeconds: 10 };

/** Where `aws lambda invoke` writes the function's answer, and its own (status, FunctionError). */
const PROBE_RESULT = 'probe-result.json';
const PROBE_INVOCATION = 'probe-invocation.json';

/**
 * Judges one invocation from the two files: the function must not have raised (FunctionError:
 * its module failed to load, it timed out) and must answer `{ ok: true }` (functions/probe/handler.ts).
 * Node rather than jq: Node is the runtime the build image is pinned to carry (RUNTIME_VERSIONS).
 */
const PROBE_VERDICT = [
  'const fs = require("node:fs");',
  'const [invocation, result] = process.argv.slice(1).map((file) => fs.readFileSync(file, "utf8"));',
  'const raised = JSON.parse(invocation).FunctionError;',
  'if (raised) { console.error("Probe failed: the function raised (" + raised + "): " + result); process.exit(1); }',
  'let verdict; try { verdict = JSON.parse(result); } catch {}',
  'if (verdict?.ok !== true) { console.error("Probe failed: " + result); process.exit(1); }',
  'console.log("Probe passed: " + verdict.checks.map((c) => c.check + " " + c.status).join(", "));',
].join(' ');

/**
 * Invokes the synthetic probe (its ARN in `PROBE_FUNCTION_ARN`, in the region the ARN names) and
 * exits non-zero unless a run passes within `retry`: so a stage is proven through the authorizer
 * with a real token and down to DynamoDB, which the requests without a token never reach.
 */
export function probeCommands(retry: ProbeRetry = PROBE_RETRY): string[] {
  const invoke = `aws lambda invoke --region "$probe_region" --function-name "$PROBE_FUNCTION_ARN" --cli-read-timeout 60 ${PROBE_RESULT} > ${PROBE_INVOCATION}`;
  const judge = `node -e '${PROBE_VERDICT}' ${PROBE_INVOCATION} ${PROBE_RESULT}`;
  return [
    `test -n "\${PROBE_FUNCTION_ARN:-}" || { echo 'PROBE_FUNCTION_ARN is not set' >&2; exit 1; }`,
    [
      // One command line, so nothing depends on the shell's variables outliving a line.
      'probe_region=$(echo "$PROBE_FUNCTION_ARN" | cut -d: -f4)',
      'attempt=1',
      'while :',
      `do rm -f ${PROBE_RESULT} ${PROBE_INVOCATION}`,
      `if ${invoke} && ${judge}; then break; fi`,
      `if [ "$attempt" -ge ${retry.attempts} ]; then echo "Probe failed \${attempt} times: no authorized read through this stage (the probe's log says which check failed)" >&2; exit 1; fi`,
      'attempt=$((attempt + 1))',
      `sleep ${retry.delaySeconds}`,
      'done',
    ].join('; '),
  ];
}

/** The probe function a smoke test invokes: its ARN known at synth (for the grant) and as an output. */
export interface ProbeTarget {
  /** The ARN the step may invoke, and nothing else. */
  readonly functionArn: string;
  /** The stage's output of the same ARN, which the commands read. */
  readonly functionArnOutput: CfnOutput;
}

/**
 * The pipeline step that tests a stage once it is deployed: the requests without a token, then a
 * run of the synthetic probe. Its role may invoke that one function and no other.
 */
export function smokeTestStep(stageName: string, apiUrl: CfnOutput, probe: ProbeTarget): CodeBuildStep {
  return new CodeBuildStep(`SmokeTest-${stageName}`, {
    envFromCfnOutputs: { API_URL: apiUrl, PROBE_FUNCTION_ARN: probe.functionArnOutput },
    commands: [...smokeTestCommands(), ...probeCommands()],
    rolePolicyStatements: [
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [probe.functionArn] }),
    ],
  });
}
