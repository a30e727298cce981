import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { METHOD_NOT_ALLOWED, methodNotAllowedTemplate } from '#shared/http/method-not-allowed.ts';
import { openApiJson } from '#shared/openapi.generated.js';
import { routes } from '#shared/routes.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };
import { buildServiceApp, type Json } from '../support/cdk.ts';

type Method = { HttpMethod: string; AuthorizationType: string; Integration: Json; MethodResponses?: Json[] };

/** Every API method of the service stack, by `METHOD /path`. */
function methodsOf(overrides: Json = {}): Map<string, Method> {
  const built = buildServiceApp(overrides);
  const template = Template.fromStack(built.service);
  const byKey = new Map<string, Method>();
  for (const method of built.service.api.methods) {
    const id = built.service.getLogicalId(method.node.defaultChild as never);
    byKey.set(`${method.httpMethod} ${method.resource.path}`, template.toJSON().Resources[id].Properties);
  }
  return byKey;
}

const resources = [...new Set(routes.map((route) => route.path))];
const allowOf = (path: string, extra: string[] = []) =>
  [...routes.filter((r) => r.path === path).map((r) => r.method as string), ...extra].join(', ');

describe('the deployed API at its edges', () => {
  let plain: Map<string, Method>;
  let withCors: Map<string, Method>;
  const origins = ['https://app.example.com', 'https://admin.example.com'];

  beforeAll(() => {
    plain = methodsOf();
    withCors = methodsOf({ 'api:corsAllowedOrigins': origins.join(' ') });
  });

  it('answers any other method of each route resource with a 405 mock carrying Allow from the route table', () => {
    for (const path of resources) {
      const method = plain.get(`ANY ${path}`);
      expect(method, path).toBeDefined();
      expect(method?.AuthorizationType).toBe('NONE');
      const integration = method?.Integration as {
        Type: string;
        IntegrationResponses: {
          StatusCode: string;
          SelectionPattern?: string;
          ResponseParameters: Json;
          ResponseTemplates: Json;
        }[];
      };
      expect(integration.Type).toBe('MOCK');
      const [response, ...others] = integration.IntegrationResponses;
      expect(others).toEqual([]);
      expect(response?.SelectionPattern).toBeUndefined();
      expect(response?.StatusCode).toBe(String(METHOD_NOT_ALLOWED.status));
      expect(response?.ResponseParameters).toEqual({
        'method.response.header.Allow': `'${allowOf(path)}'`,
        'method.response.header.Content-Type': "'application/problem+json'",
      });
      expect(response?.ResponseTemplates).toEqual({
        'application/json': methodNotAllowedTemplate(allowOf(path)),
      });
    }
    // Concrete, so a wrong route table fails here too.
    expect(plain.get('ANY /api/v3/pet/{petId}')?.Integration).toMatchObject({
      IntegrationResponses: [
        { ResponseParameters: { 'method.response.header.Allow': "'GET, POST, DELETE'" } },
      ],
    });
  });

  it('adds no 405 mock where no route is (an intermediate resource stays 404)', () => {
    expect(plain.has('ANY /api/v3')).toBe(false);
    expect(plain.has('ANY /api')).toBe(false);
  });

  it('has CORS off by default: no OPTIONS method, and no function gets allowed origins', () => {
    expect([...plain.keys()].filter((key) => key.startsWith('OPTIONS '))).toEqual([]);
    const template = Template.fromStack(buildServiceApp().service);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(JSON.stringify(fn.Properties.Environment ?? {})).not.toContain('CORS_ALLOWED_ORIGINS');
    }
  });

  it('with allowed origins in context, answers preflight on each resource and lists OPTIONS in Allow', () => {
    for (const path of resources) {
      const options = withCors.get(`OPTIONS ${path}`);
      expect(options?.AuthorizationType, path).toBe('NONE');
      const integration = options?.Integration as {
        IntegrationResponses: { StatusCode: string; ResponseParameters: Json }[];
      };
      const [response] = integration.IntegrationResponses;
      expect(response?.StatusCode).toBe('204');
      expect(response?.ResponseParameters).toMatchObject({
        'method.response.header.Access-Control-Allow-Origin': `'${origins[0]}'`,
        'method.response.header.Access-Control-Allow-Methods': `'${allowOf(path, ['OPTIONS']).replaceAll(', ', ',')}'`,
        'method.response.header.Access-Control-Allow-Headers':
          "'Authorization,Content-Type,Idempotency-Key,If-Match,api_key'",
        'method.response.header.Vary': "'Origin'",
      });
      expect(withCors.get(`ANY ${path}`)?.Integration).toMatchObject({
        IntegrationResponses: [
          { ResponseParameters: { 'method.response.header.Allow': `'${allowOf(path, ['OPTIONS'])}'` } },
        ],
      });
    }
  });

  it('with allowed origins, gives every function the list, so its answers carry Access-Control-Allow-Origin', () => {
    const template = Template.fromStack(
      buildServiceApp({ 'api:corsAllowedOrigins': origins.join(' ') }).service,
    );
    const functions = Object.values(template.findResources('AWS::Lambda::Function')).filter((fn) =>
      JSON.stringify(fn.Properties.Description ?? '').match(/^"(GET|POST|PUT|DELETE) /),
    );
    expect(functions).toHaveLength(routes.length);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(origins.join(' '));
    }
  });

  it('refuses a context value that is not a list of origins', () => {
    expect(() => buildServiceApp({ 'api:corsAllowedOrigins': 'https://app.example.com/path' })).toThrow(
      /api:corsAllowedOrigins/,
    );
    expect(() => buildServiceApp({ 'api:corsAllowedOrigins': 'http://app.example.com' })).toThrow(
      /api:corsAllowedOrigins/,
    );
  });
});

describe('the money bounds the OpenAPI document states', () => {
  it('are those every stage deploys to the wallet functions (the document is built once, for all stages)', () => {
    const document = JSON.parse(openApiJson) as {
      components: {
        schemas: { SendRequest: { properties: { amount: { maximum: number; 'x-decimals': number } } } };
      };
    };
    const amount = document.components.schemas.SendRequest.properties.amount;
    for (const stage of Object.keys(cdkJson.context.stages)) {
      const template = Template.fromStack(buildServiceApp({ stage }).service);
      const [sendMoney] = Object.values(template.findResources('AWS::Lambda::Function')).filter((fn) =>
        String(fn.Properties.Description).startsWith('POST /api/wallet/send'),
      );
      const env = sendMoney?.Properties.Environment.Variables as Record<string, string>;
      const decimals = Number(env.CURRENCY_DECIMALS);
      expect(amount['x-decimals'], stage).toBe(decimals);
      expect(amount.maximum, stage).toBe(Number(env.MAX_TRANSFER_MINOR) / 10 ** decimals);
    }
  });
});
