/**
 * Evaluating an authorizer's IAM policy as API Gateway does for `execute-api:Invoke`: the local
 * gateway has no API Gateway to do it.
 */
import type { PolicyDocument, Statement } from 'aws-lambda';

const INVOKE = 'execute-api:Invoke';

/**
 * Whether `policy` lets the caller invoke `methodArn`, evaluated as API Gateway evaluates an
 * authorizer's policy for `execute-api:Invoke`: an applicable Deny wins, otherwise an applicable
 * Allow is needed. `*` and `?` are wildcards in actions (case-insensitive) and resources.
 * Conditions are not evaluated here, so a statement carrying one is read the safe way: its Allow
 * never applies, its Deny always does.
 */
export function isAllowed(policy: PolicyDocument, methodArn: string): boolean {
  // IAM also accepts a single statement object where the type promises an array.
  const given = policy.Statement as readonly Statement[] | Statement | undefined;
  const statements = given === undefined ? [] : Array.isArray(given) ? given : [given];
  let allowed = false;
  for (const statement of statements) {
    if (statement.Effect === 'Deny' && (statement.Condition !== undefined || applies(statement, methodArn))) {
      return false;
    }
    if (statement.Effect === 'Allow' && statement.Condition === undefined && applies(statement, methodArn)) {
      allowed = true;
    }
  }
  return allowed;
}

function applies(statement: Statement, methodArn: string): boolean {
  const actionMatches =
    'Action' in statement
      ? matchesAny(statement.Action, INVOKE, 'i')
      : !matchesAny(statement.NotAction, INVOKE, 'i');
  if ('Resource' in statement && statement.Resource !== undefined) {
    return actionMatches && matchesAny(statement.Resource, methodArn, '');
  }
  if ('NotResource' in statement && statement.NotResource !== undefined) {
    return actionMatches && !matchesAny(statement.NotResource, methodArn, '');
  }
  return false;
}

function matchesAny(patterns: string | readonly string[], value: string, flags: 'i' | ''): boolean {
  const list = typeof patterns === 'string' ? [patterns] : patterns;
  return list.some((pattern) => wildcardPattern(pattern, flags).test(value));
}

// Policies repeat the same few resource patterns (one per route): compile each once.
const compiledPatterns = new Map<string, RegExp>();

function wildcardPattern(pattern: string, flags: string): RegExp {
  const key = `${flags}:${pattern}`;
  let compiled = compiledPatterns.get(key);
  if (!compiled) {
    compiled = compileWildcard(pattern, flags);
    if (compiledPatterns.size < 1_000) compiledPatterns.set(key, compiled);
  }
  return compiled;
}

function compileWildcard(pattern: string, flags: string): RegExp {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, `s${flags}`);
}
