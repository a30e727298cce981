/**
 * The IAM policy a Lambda authorizer returns to API Gateway (REST). The local gateway evaluates
 * such policies in `infra/local/policy-evaluation.ts`.
 */
import type { APIGatewayAuthorizerResult, PolicyDocument, Statement } from 'aws-lambda';
import { type Route, routes } from '../routes.ts';
import { formatScopes } from './scopes.ts';

const INVOKE = 'execute-api:Invoke';

/**
 * Every method on every path that ends in "/": API Gateway routes `/api/wallet/balance/` to the
 * route's function, whose first check answers 404 (`shared/http/canonical-path.ts`). Allowed for
 * every valid token, so that a trailing slash gets that same 404 on every route, whatever the
 * scopes; a policy for the exact paths alone answered 403 on literal paths and 404 on the others.
 */
const ANY_PATH_WITH_TRAILING_SLASH = '/*/*/';

interface AuthorizedRoute {
  readonly scopes: readonly string[];
  /** The route's resource under a stage: `/POST/api/v3/pet`, `/GET/api/v3/pet/*` for `{petId}`. */
  readonly resource: string;
}

/**
 * Per route table, the routes behind the authorizer and the policy documents built so far, by
 * stage and by the routes they allow: a handful per deployment, so each is built once and shared
 * (frozen) by every token that opens the same routes. Built per token, it cost a large share of the
 * authorizer's own time (docs/decisions/authorizer-jwt-libraries.md).
 */
interface RouteTablePolicies {
  readonly authorized: readonly AuthorizedRoute[];
  readonly documents: Map<string, PolicyDocument>;
}

const policiesByTable = new WeakMap<readonly Route[], RouteTablePolicies>();

function policiesOf(table: readonly Route[]): RouteTablePolicies {
  let policies = policiesByTable.get(table);
  if (policies === undefined) {
    const authorized = table.flatMap((route) =>
      route.scopes
        ? [{ scopes: route.scopes, resource: `/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}` }]
        : [],
    );
    policies = { authorized, documents: new Map() };
    policiesByTable.set(table, policies);
  }
  return policies;
}

/** `arn:{partition}:execute-api:{region}:{account}:{apiId}/{stage}`, then `/{METHOD}/{path}`. */
const METHOD_ARN = /^(arn:[^:/]+:execute-api:[^:/]+:[^:/]+:[^:/]+\/[^/]+)\/[^/]+\/.*$/s;

/** The parts of a method ARN of one request. */
export interface MethodArnParts {
  readonly region: string;
  readonly accountId: string;
  readonly apiId: string;
  readonly stage: string;
  /** HTTP method, in any case. */
  readonly method: string;
  /** The request path, without query string; `/` for the root. */
  readonly path: string;
  /** AWS partition; `aws` unless given. */
  readonly partition?: string;
}

/**
 * The method ARN API Gateway passes to an authorizer for a request, e.g.
 * `arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/api/v3/pet/42`.
 */
export function methodArnFor(parts: MethodArnParts): string {
  const path = parts.path.startsWith('/') ? parts.path : `/${parts.path}`;
  const api = `arn:${parts.partition ?? 'aws'}:execute-api:${parts.region}:${parts.accountId}:${parts.apiId}`;
  return `${api}/${parts.stage}/${parts.method.toUpperCase()}${path}`;
}

/**
 * The authorizer's answer for a verified token. The policy allows every authorized route whose
 * scopes the token all holds, whatever route `methodArn` names: API Gateway caches the answer by
 * token and applies it to every route the same token calls next, so it must not depend on the
 * route that happened to come first. Only the API and stage are taken from `methodArn`.
 * Paths ending in "/" are allowed to every token (see {@link ANY_PATH_WITH_TRAILING_SLASH}), so
 * there is always an Allow; a token holding no route's scopes gets 403 everywhere else.
 * `routeTable` is `shared/routes.ts` but for tests.
 */
export function policyFor(
  methodArn: string,
  principalId: string,
  scopes: ReadonlySet<string>,
  routeTable: readonly Route[] = routes,
): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: documentFor(policiesOf(routeTable), stagePrefixOf(methodArn), scopes),
    context: { sub: principalId, scope: formatScopes(scopes) },
  };
}

function documentFor(
  { authorized, documents }: RouteTablePolicies,
  prefix: string,
  scopes: ReadonlySet<string>,
): PolicyDocument {
  // The allowed routes as one character per route ('1' allowed): no limit on the number of
  // routes, unlike a bit mask in a 32-bit integer, which wraps and would grant the wrong ones.
  let allowed = '';
  for (const route of authorized) allowed += route.scopes.every((scope) => scopes.has(scope)) ? '1' : '0';
  const key = `${allowed} ${prefix}`;
  let document = documents.get(key);
  if (document === undefined) {
    const resources = [
      ...authorized.filter((_, i) => allowed[i] === '1').map((route) => `${prefix}${route.resource}`),
      `${prefix}${ANY_PATH_WITH_TRAILING_SLASH}`,
    ];
    const statement: Statement = { Effect: 'Allow', Action: INVOKE, Resource: resources };
    document = { Version: '2012-10-17', Statement: [statement] };
    // Shared by every later answer: nothing may change it in place.
    for (const part of [resources, statement, document.Statement, document]) Object.freeze(part);
    documents.set(key, document);
  }
  return document;
}

/** `arn:...:{apiId}/{stage}` of a method ARN; throws when it is not one. */
function stagePrefixOf(methodArn: string): string {
  const prefix = METHOD_ARN.exec(methodArn)?.[1];
  if (prefix === undefined) throw new Error(`Not an execute-api method ARN: ${methodArn}`);
  return prefix;
}
