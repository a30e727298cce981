#!/usr/bin/env bash
# Smoke test of the synthesized service template under the AWS SAM CLI (Docker), for machines that
# have both. `sam local invoke` of getOpenApi (no table, no token) must answer 200; with `npm start`
# running, the authorizer with a fresh local token must allow the caller. Without `sam` or a
# Docker daemon it says that it skipped and exits 0; `SAM_SMOKE_REQUIRED=1` turns a skip into a
# failure (for a CI stage that has Docker).
#
#   scripts/sam-smoke.sh [stage]        (default: dev; PORT as for npm start)
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-dev}"
template="cdk.out/wallet-catalog-${stage}-service.template.json"
export PATH="$PWD/node_modules/.bin:$PATH"

skip() {
  echo "sam-smoke: SKIPPED: $1" >&2
  if [[ "${SAM_SMOKE_REQUIRED:-}" == 1 ]]; then exit 1; fi
  exit 0
}
command -v sam >/dev/null 2>&1 || skip "the AWS SAM CLI (sam) is not installed"
command -v docker >/dev/null 2>&1 || skip "docker is not installed"
docker info >/dev/null 2>&1 || skip "no Docker daemon answers (docker info failed)"

cdk synth -q -c "stage=${stage}"

logical_id() {
  node -e 'const t = require(process.argv[1]); const id = Object.keys(t.Resources).find((k) => k.startsWith(process.argv[2] + "Function") && t.Resources[k].Type === "AWS::Lambda::Function"); if (!id) process.exit(1); console.log(id);' "./${template}" "$1"
}
# The last line sam prints on stdout is the function's response.
last_json() { node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { const r = JSON.parse(s.trim().split("\n").pop()); console.log(process.argv[1].split(".").reduce((v, k) => v?.[k], r)); });' "$1"; }

status=$(sam local invoke "$(logical_id getOpenApi)" -t "$template" -e events/get-open-api.json 2>/dev/null | last_json statusCode)
[[ "$status" == 200 ]] || { echo "sam-smoke: FAILED: getOpenApi answered ${status}, expected 200" >&2; exit 1; }
echo "sam-smoke: getOpenApi answered 200"

# The local issuer listens on the host's loopback only. Docker Desktop (macOS, Windows) forwards
# host.docker.internal there; on Linux, host-gateway would be the docker0 bridge's address, where
# nothing listens, so the container shares the host's network and the name means loopback.
if [[ "$(uname -s)" == Linux ]]; then
  reach_host=(--docker-network host --add-host host.docker.internal:127.0.0.1)
else
  reach_host=()
fi
if authorizer=$(node infra/local/invoke/sam-env.ts "$stage" cdk.out); then
  effect=$(sam local invoke "$authorizer" -t "$template" -e cdk.out/sam-authorizer-event.json \
    --env-vars cdk.out/sam-env.json "${reach_host[@]}" 2>/dev/null |
    last_json policyDocument.Statement.0.Effect)
  [[ "$effect" == Allow ]] || { echo "sam-smoke: FAILED: the authorizer answered ${effect}, expected Allow" >&2; exit 1; }
  echo "sam-smoke: the authorizer allowed a local token"
else
  echo "sam-smoke: authorizer not tried: npm start is not running" >&2
fi
