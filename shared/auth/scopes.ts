/**
 * Scopes of an OAuth 2.0 access token. RFC 9068 carries them in `scope`, a space-separated
 * string; several identity providers (Okta, Entra ID) send `scp` instead, as an array or a string.
 */

/** A scope-token of RFC 6749 §3.3: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** A token's claims; only `scope` and `scp` are read. */
export type ScopeClaims = { readonly [claim: string]: unknown };

/**
 * The scopes a token grants: the union of `scope` and `scp`, each a space-separated string or an
 * array of strings. Values that are not scope-tokens are dropped rather than trusted, because the
 * held scopes travel on as one space-separated string (the authorizer context) and a value with a
 * space in it would smuggle in a scope the token never granted.
 *
 * @param prefix when set, only scopes starting with it count, without it (`wallet-api/read:wallet`
 *   → `read:wallet` for the prefix `wallet-api/`)
 */
export function scopesOf(claims: ScopeClaims, prefix = ''): ReadonlySet<string> {
  if (claims.scp !== undefined || typeof claims.scope !== 'string') return collectScopes(claims, prefix);
  // The usual token (RFC 9068, Amazon Cognito): one `scope` string, the same for every token of a client.
  const key = `${prefix}\n${claims.scope}`;
  let scopes = scopesByString.get(key);
  if (scopes === undefined) {
    scopes = collectScopes(claims, prefix);
    if (scopesByString.size < MAX_SCOPE_STRINGS) scopesByString.set(key, scopes);
  }
  return scopes;
}

/** The scopes of each `scope` string met: an authorizer sees a few, once per client and grant. */
const scopesByString = new Map<string, ReadonlySet<string>>();
const MAX_SCOPE_STRINGS = 256;

function collectScopes(claims: ScopeClaims, prefix: string): Set<string> {
  const scopes = new Set<string>();
  for (const claim of [claims.scope, claims.scp]) {
    for (const value of claimValues(claim)) {
      if (!SCOPE_TOKEN.test(value)) continue;
      // With a prefix (Amazon Cognito names scopes `<resource server>/<scope>`), only scopes of
      // our own resource server count, never a same-named scope of another API.
      if (prefix === '') scopes.add(value);
      else if (value.startsWith(prefix)) scopes.add(value.slice(prefix.length));
    }
  }
  return scopes;
}

/** The scopes as the `scope` claim and the authorizer context spell them. */
export function formatScopes(scopes: Iterable<string>): string {
  return [...scopes].join(' ');
}

function claimValues(claim: unknown): string[] {
  if (typeof claim === 'string') return claim.split(' ').filter((value) => value !== '');
  if (Array.isArray(claim)) return claim.filter((value): value is string => typeof value === 'string');
  return [];
}
