import { Duration, Validations } from 'aws-cdk-lib';
import {
  AuthorizationType,
  type IResource,
  MockIntegration,
  PassthroughBehavior,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { CORS_ALLOWED_HEADERS, CORS_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import {
  allowHeader,
  METHOD_NOT_ALLOWED,
  methodNotAllowedTemplate,
} from '#shared/http/method-not-allowed.ts';
import { PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';
import type { Route } from '#shared/routes.ts';

const PUBLIC_BY_DESIGN =
  'Answered by API Gateway itself from a mock integration (405 or a CORS preflight): no function, no data, nothing to authorize.';

/**
 * What API Gateway answers on each resource of the route table besides its routes, mirrored by
 * the local gateway (`infra/local/request-pipeline.ts`):
 * - any other method: 405 problem+json with `Allow`, from an `ANY` mock method (a REST API
 *   answers a method a resource lacks with 403 MISSING_AUTHENTICATION_TOKEN otherwise; explicit
 *   methods take precedence over `ANY`). HEAD included: REST APIs give none implicitly.
 * - with `corsAllowedOrigins`, CORS preflight: an `OPTIONS` mock method (CDK `addCorsPreflight`).
 *   Functions add `Access-Control-Allow-Origin` to their own answers (`shared/http/cors.ts`).
 */
export function addHttpEdges(
  api: RestApi,
  routes: readonly Route[],
  corsAllowedOrigins: readonly string[],
): void {
  const cors = corsAllowedOrigins.length > 0;
  for (const path of new Set(routes.map((route) => route.path))) {
    const resource = api.root.resourceForPath(path);
    const allow = allowHeader(routes, path, cors);
    if (cors) {
      const methods = allow.split(', ');
      resource.addCorsPreflight({
        allowOrigins: [...corsAllowedOrigins],
        allowHeaders: [...CORS_ALLOWED_HEADERS],
        allowMethods: methods,
        maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
        statusCode: 204,
      });
      acknowledgePublic(resource, 'OPTIONS');
    }
    addMethodNotAllowed(resource, allow);
  }
}

function addMethodNotAllowed(resource: IResource, allow: string): void {
  const status = String(METHOD_NOT_ALLOWED.status);
  resource.addMethod(
    'ANY',
    new MockIntegration({
      // Whatever the request's media type: the mock answers 405 for every one.
      passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
      requestTemplates: { 'application/json': `{"statusCode": ${status}}` },
      integrationResponses: [
        {
          // No selection pattern: the default response, whatever status the mock selected.
          statusCode: status,
          responseParameters: {
            'method.response.header.Allow': `'${allow}'`,
            'method.response.header.Content-Type': `'${PROBLEM_CONTENT_TYPE}'`,
          },
          responseTemplates: { 'application/json': methodNotAllowedTemplate(allow) },
        },
      ],
    }),
    {
      authorizationType: AuthorizationType.NONE,
      methodResponses: [
        {
          statusCode: status,
          responseParameters: {
            'method.response.header.Allow': true,
            'method.response.header.Content-Type': true,
          },
        },
      ],
    },
  );
  acknowledgePublic(resource, 'ANY');
}

function acknowledgePublic(resource: IResource, method: string): void {
  const node = resource.node.tryFindChild(method);
  if (!node) return;
  Validations.of(node).acknowledge({ id: 'AwsSolutions-APIG4', reason: PUBLIC_BY_DESIGN });
  Validations.of(node).acknowledge({ id: 'AwsSolutions-COG4', reason: PUBLIC_BY_DESIGN });
}
