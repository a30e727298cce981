/**
 * Routing as API Gateway does it for the routes of `shared/routes.ts`: literal segments must be
 * equal, `{name}` segments take any one non-empty segment, a literal match beats a parameter.
 */
import type { Route } from '#shared/routes.ts';

export interface Matched {
  readonly route: Route;
  readonly pathParameters: Record<string, string> | null;
}

/** Where a request goes: its path as the URL parser normalises it, and its query. */
export interface RequestTarget {
  readonly path: string;
  readonly query: URLSearchParams | null;
}

interface RouteTemplate {
  readonly route: Route;
  /** Per segment of the resource path: the literal it must equal, or the path parameter it binds. */
  readonly segments: readonly ({ readonly literal: string } | { readonly parameter: string })[];
}

export class Router {
  /** Routes without path parameters by `METHOD path`: most requests are found without a scan. */
  private readonly literalRoutes = new Map<string, RouteTemplate>();
  private readonly parameterRoutes: RouteTemplate[];
  /** Resource paths of only literal segments, whatever their methods. */
  private readonly literalPaths: ReadonlySet<string>;
  private readonly methods: ReadonlySet<string>;

  constructor(routes: readonly Route[]) {
    this.methods = new Set(routes.map((route) => route.method));
    const templates = routes.map((route) => ({
      route,
      segments: route.path
        .split('/')
        .slice(1)
        .map((segment) => {
          const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
          return parameter === undefined ? { literal: segment } : { parameter };
        }),
    }));
    for (const template of templates) {
      const key = `${template.route.method} ${template.route.path}`;
      const literal = template.segments.every((segment) => 'literal' in segment);
      // The first of two identical routes wins, as in the scan below.
      if (literal && !this.literalRoutes.has(key)) this.literalRoutes.set(key, template);
    }
    this.parameterRoutes = templates.filter((t) => t.segments.some((s) => 'parameter' in s));
    this.literalPaths = new Set(
      templates.filter((t) => t.segments.every((s) => 'literal' in s)).map((t) => t.route.path),
    );
  }

  /**
   * The resource path (`/api/v3/pet/{petId}`) `path` falls on whatever the method, or `undefined`
   * when no route's resource matches: what tells a wrong method (405) from an unknown path (404).
   */
  resourceOf(path: string): string | undefined {
    for (const method of this.methods) {
      const matched = this.match(method, path);
      if (matched) return matched.route.path;
    }
    return undefined;
  }

  /**
   * The route serving `method` and `path`, with its path parameters percent-decoded. As API Gateway
   * does, the resource is chosen first, whatever the method (a literal segment beats a parameter),
   * then its method: `POST /api/v3/pet/findByStatus` falls on the literal resource, which has no
   * POST (405), not on `POST /api/v3/pet/{petId}`.
   */
  match(method: string, path: string): Matched | undefined {
    // API Gateway ignores one trailing slash: /api/v3/pet/ is /api/v3/pet.
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    // All literal segments is the best match there can be.
    const literal = this.literalRoutes.get(`${method} ${trimmed}`);
    if (literal) return { route: literal.route, pathParameters: null };
    if (this.literalPaths.has(trimmed)) return undefined;
    const segments = trimmed.split('/').slice(1);
    let best: { matched: Matched | undefined; literals: number } | undefined;
    for (const template of this.parameterRoutes) {
      if (template.segments.length !== segments.length) continue;
      // Without a prototype: a parameter is never read as an inherited member (`constructor`).
      const parameters: Record<string, string> = Object.create(null);
      let literals = 0;
      const fits = template.segments.every((part, i) => {
        const segment = segments[i] as string;
        if ('literal' in part) {
          literals++;
          return part.literal === segment;
        }
        parameters[part.parameter] = decodeSegment(segment);
        return segment !== '';
      });
      if (!fits) continue;
      const served = template.route.method === method;
      if (best && (literals < best.literals || (literals === best.literals && (best.matched || !served))))
        continue;
      const pathParameters = Object.keys(parameters).length > 0 ? parameters : null;
      best = {
        matched: served ? { route: template.route, pathParameters } : undefined,
        literals,
      };
    }
    return best?.matched;
  }
}

/** Path characters the URL parser keeps as they are, after one `/` (`//` would start an authority). */
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&'()*+,;=:@%/]*$/;
/** A segment the URL parser may resolve (`.`, `..`, `%2e`…), conservatively: any segment starting so. */
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

/**
 * The path and query of a request target, as `new URL(target, base)` gives them. The common case,
 * an origin-form path without query, dot segments or characters the parser would encode, is the
 * pathname unchanged and is taken as it is: a URL object and its search params cost more than
 * the rest of the routing.
 */
export function requestTarget(target: string): RequestTarget {
  if (PLAIN_PATH.test(target) && !DOT_SEGMENT.test(target)) return { path: target, query: null };
  const url = new URL(target, 'http://localhost');
  return { path: url.pathname, query: url.searchParams };
}

/** A path parameter as the function sees it: percent-decoded, or as sent when that is not possible. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
