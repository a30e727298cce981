import type { PolicyDocument, Statement } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { isAllowed } from '#infra/local/policy-evaluation.ts';
import { methodArnFor, policyFor } from '#shared/auth/policy.ts';
import { scopesOf } from '#shared/auth/scopes.ts';
import type { Route } from '#shared/routes.ts';

const api = { region: 'us-east-1', accountId: '123456789012', apiId: 'abc123', stage: 'prod' };
const prefix = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod';
const getPet = `${prefix}/GET/api/v3/pet/42`;
const addPet = `${prefix}/POST/api/v3/pet`;

const policy = (...Statement: Statement[]): PolicyDocument => ({ Version: '2012-10-17', Statement });
const allow = (Resource: string | string[], Action: string | string[] = 'execute-api:Invoke'): Statement => ({
  Effect: 'Allow',
  Action,
  Resource,
});
const deny = (Resource: string | string[]): Statement => ({
  Effect: 'Deny',
  Action: 'execute-api:Invoke',
  Resource,
});

describe('methodArnFor', () => {
  it('builds the ARN API Gateway passes to the authorizer for a request', () => {
    expect(methodArnFor({ ...api, method: 'GET', path: '/api/v3/pet/42' })).toBe(getPet);
  });

  it('upper-cases the method and adds a missing leading slash', () => {
    expect(methodArnFor({ ...api, method: 'post', path: 'api/v3/pet' })).toBe(addPet);
  });

  it('ends in the method and a slash for the root path', () => {
    expect(methodArnFor({ ...api, method: 'GET', path: '/' })).toBe(`${prefix}/GET/`);
  });

  it('uses the partition given', () => {
    expect(methodArnFor({ ...api, partition: 'aws-cn', method: 'GET', path: '/x' })).toBe(
      'arn:aws-cn:execute-api:us-east-1:123456789012:abc123/prod/GET/x',
    );
  });
});

describe('isAllowed', () => {
  it('allows a resource an Allow names', () => {
    expect(isAllowed(policy(allow(getPet)), getPet)).toBe(true);
  });

  it('denies what no statement allows', () => {
    expect(isAllowed(policy(allow(getPet)), addPet)).toBe(false);
    expect(isAllowed(policy(), getPet)).toBe(false);
  });

  it('lets an explicit Deny win over an Allow, in either order', () => {
    expect(isAllowed(policy(allow(`${prefix}/*`), deny(getPet)), getPet)).toBe(false);
    expect(isAllowed(policy(deny(getPet), allow(`${prefix}/*`)), getPet)).toBe(false);
  });

  it('ignores a Deny of other resources', () => {
    expect(isAllowed(policy(allow(`${prefix}/*`), deny(addPet)), getPet)).toBe(true);
  });

  it('reads * as any characters, slashes included', () => {
    expect(isAllowed(policy(allow(`${prefix}/*`)), getPet)).toBe(true);
    expect(isAllowed(policy(allow(`${prefix}/*/*`)), addPet)).toBe(true);
    expect(isAllowed(policy(allow(`${prefix}/GET/api/v3/pet/*`)), getPet)).toBe(true);
    expect(isAllowed(policy(allow(`${prefix}/GET/api/v3/pet/*`)), `${prefix}/POST/api/v3/pet/42`)).toBe(
      false,
    );
  });

  it('reads ? as exactly one character', () => {
    expect(isAllowed(policy(allow(`${prefix}/GET/api/v3/pet/4?`)), getPet)).toBe(true);
    expect(isAllowed(policy(allow(`${prefix}/GET/api/v3/pet/?`)), getPet)).toBe(false);
  });

  it('reads every other character literally', () => {
    const dotted = `${prefix}/GET/api/v3/pet.json`;
    expect(isAllowed(policy(allow(dotted)), dotted)).toBe(true);
    expect(isAllowed(policy(allow(dotted)), `${prefix}/GET/api/v3/petxjson`)).toBe(false);
  });

  it('takes Resource as a string or an array', () => {
    expect(isAllowed(policy(allow([addPet, getPet])), getPet)).toBe(true);
    expect(isAllowed(policy(allow([addPet])), getPet)).toBe(false);
  });

  it('allows nothing on another stage, API, account or region', () => {
    const prodOnly = policy(allow(`${prefix}/*/*`));
    for (const other of [
      { stage: 'dev' },
      { apiId: 'xyz789' },
      { accountId: '210987654321' },
      { region: 'eu-west-1' },
    ]) {
      expect(
        isAllowed(prodOnly, methodArnFor({ ...api, ...other, method: 'GET', path: '/api/v3/pet/42' })),
      ).toBe(false);
    }
  });

  it.each([
    'execute-api:Invoke',
    'execute-api:*',
    '*',
    'EXECUTE-API:invoke',
    ['execute-api:ManageConnections', '*'],
  ])('matches the action %j to execute-api:Invoke', (action) => {
    expect(isAllowed(policy(allow(getPet, action)), getPet)).toBe(true);
  });

  it.each(['execute-api:ManageConnections', 's3:*', 'execute-api:InvalidateCache'])(
    'does not match the action %j to execute-api:Invoke',
    (action) => {
      expect(isAllowed(policy(allow(getPet, action)), getPet)).toBe(false);
    },
  );

  it('applies NotResource to everything but the resources it names', () => {
    const statement: Statement = { Effect: 'Allow', Action: 'execute-api:Invoke', NotResource: addPet };
    expect(isAllowed(policy(statement), getPet)).toBe(true);
    expect(isAllowed(policy(statement), addPet)).toBe(false);
  });

  it('applies NotAction to every action but the ones it names', () => {
    const other: Statement = {
      Effect: 'Allow',
      NotAction: 'execute-api:ManageConnections',
      Resource: getPet,
    };
    const invoke: Statement = { Effect: 'Allow', NotAction: 'execute-api:Invoke', Resource: getPet };
    expect(isAllowed(policy(other), getPet)).toBe(true);
    expect(isAllowed(policy(invoke), getPet)).toBe(false);
  });

  it('reads a statement with a Condition it cannot evaluate the safe way', () => {
    const Condition = { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } };
    expect(isAllowed(policy({ ...allow(getPet), Condition }), getPet)).toBe(false);
    expect(isAllowed(policy(allow(getPet), { ...deny(addPet), Condition }), getPet)).toBe(false);
  });

  it('accepts a single statement object, as IAM does', () => {
    const single = { Version: '2012-10-17', Statement: allow(getPet) } as unknown as PolicyDocument;
    expect(isAllowed(single, getPet)).toBe(true);
  });
});

describe('policyFor', () => {
  it('allows the routes of the held scopes, path parameters as wildcards, from any route of the API', () => {
    const result = policyFor(addPet, 'alice', new Set(['read:pets', 'write:pets']));
    expect(result).toEqual({
      principalId: 'alice',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Action: 'execute-api:Invoke',
            Resource: [
              `${prefix}/POST/api/v3/pet`,
              `${prefix}/PUT/api/v3/pet`,
              `${prefix}/GET/api/v3/pet/findByStatus`,
              `${prefix}/GET/api/v3/pet/findByTags`,
              `${prefix}/GET/api/v3/pet/*`,
              `${prefix}/POST/api/v3/pet/*`,
              `${prefix}/DELETE/api/v3/pet/*`,
              `${prefix}/POST/api/v3/pet/*/uploadImage`,
              `${prefix}/GET/api/v3/pet/*/images/*`,
              `${prefix}/*/*/`,
            ],
          },
        ],
      },
      context: { sub: 'alice', scope: 'read:pets write:pets' },
    });
  });

  it('never lists a public route (it has no authorizer)', () => {
    const all = new Set(['read:pets', 'write:pets', 'read:wallet', 'write:wallet']);
    const { policyDocument } = policyFor(getPet, 'alice', all);
    expect(JSON.stringify(policyDocument)).not.toContain('openapi');
  });

  it('allows no route when no scope opens one, only the paths ending in "/" that every function refuses', () => {
    const { policyDocument } = policyFor(getPet, 'alice', new Set(['read:wallet2']));
    expect(policyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: [`${prefix}/*/*/`] },
    ]);
    expect(isAllowed(policyDocument, getPet)).toBe(false);
    expect(isAllowed(policyDocument, `${getPet}/`)).toBe(true);
  });

  it('lets every token reach a path ending in "/", so the function answers its 404 before scopes are judged', () => {
    const { policyDocument } = policyFor(getPet, 'alice', new Set(['read:pets']));
    const balanceWithSlash = methodArnFor({ ...api, method: 'GET', path: '/api/wallet/balance/' });
    expect(isAllowed(policyDocument, balanceWithSlash)).toBe(true);
    expect(isAllowed(policyDocument, balanceWithSlash.slice(0, -1))).toBe(false);
  });

  it('gives callers of the same scopes one policy that none of them can change for the others', () => {
    const first = policyFor(addPet, 'alice', new Set(['read:pets']));
    const statement = first.policyDocument.Statement[0] as { Resource: string[] };
    expect(() => statement.Resource.push(`${prefix}/*/*`)).toThrow(TypeError);
    expect(() => first.policyDocument.Statement.pop()).toThrow(TypeError);
    const next = policyFor(getPet, 'bob', new Set(['read:pets']));
    expect(next.policyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        Resource: [
          `${prefix}/GET/api/v3/pet/findByStatus`,
          `${prefix}/GET/api/v3/pet/findByTags`,
          `${prefix}/GET/api/v3/pet/*`,
          `${prefix}/GET/api/v3/pet/*/images/*`,
          `${prefix}/*/*/`,
        ],
      },
    ]);
  });

  it('keeps the policies of different stages apart', () => {
    const otherStage = methodArnFor({ ...api, stage: 'test', method: 'GET', path: '/api/v3/pet/1' });
    policyFor(getPet, 'alice', new Set(['read:pets']));
    const { policyDocument } = policyFor(otherStage, 'alice', new Set(['read:pets']));
    expect(JSON.stringify(policyDocument)).toContain('/test/GET/api/v3/pet/*');
    expect(JSON.stringify(policyDocument)).not.toContain('/prod/');
  });

  it('grants exactly the routes of the held scopes in a table of more than 32 routes', () => {
    // One scope per route: route i needs scope s<i>; a 32-bit route mask would wrap past route 31.
    const table = Array.from({ length: 70 }, (_, i) => ({
      operationId: `op${i}`,
      method: 'GET' as const,
      path: `/api/r${i}`,
      functionDir: `r${i}`,
      scopes: [`s${i}`],
      summary: `route ${i}`,
    })) as unknown as Route[];
    for (const held of [[33], [0], [1, 32, 33, 64], [31, 63, 69]]) {
      const { policyDocument } = policyFor(addPet, 'alice', new Set(held.map((i) => `s${i}`)), table);
      const granted = table.flatMap((route, i) =>
        isAllowed(policyDocument, `${prefix}/GET${route.path}`) ? [i] : [],
      );
      expect(granted, `scopes ${held}`).toEqual(held);
    }
  });

  it('refuses something that is not an execute-api method ARN', () => {
    expect(() => policyFor('arn:aws:lambda:us-east-1:123456789012:function:f', 'a', new Set())).toThrow();
    expect(() => policyFor(`${prefix}`, 'a', new Set())).toThrow();
  });
});

describe('scopesOf', () => {
  it('reads the space-separated scope claim', () => {
    expect([...scopesOf({ scope: 'read:pets  write:pets' })]).toEqual(['read:pets', 'write:pets']);
  });

  it('reads the scp claim as an array or a string, together with scope', () => {
    expect([...scopesOf({ scope: 'read:pets', scp: ['write:pets', 'read:pets'] })]).toEqual([
      'read:pets',
      'write:pets',
    ]);
    expect([...scopesOf({ scp: 'read:wallet write:wallet' })]).toEqual(['read:wallet', 'write:wallet']);
  });

  it('drops values that are not scope-tokens, so none can smuggle in another scope', () => {
    expect([...scopesOf({ scp: ['read:pets write:wallet', 42, '', 'a"b', 'read:pets'] })]).toEqual([
      'read:pets',
    ]);
  });

  it('grants nothing when the claims are absent or of another type', () => {
    expect(scopesOf({}).size).toBe(0);
    expect(scopesOf({ scope: 42, scp: { read: true } }).size).toBe(0);
  });
});

describe('scopesOf with a resource-server prefix (Amazon Cognito)', () => {
  it('keeps only the scopes of our resource server, without the prefix', () => {
    expect(
      scopesOf({ scope: 'wallet-api/read:wallet other-api/write:wallet read:pets' }, 'wallet-api/'),
    ).toEqual(new Set(['read:wallet']));
  });

  it('reads the same scope string again for another prefix, not as it read it before', () => {
    const scope = 'wallet-api/read:wallet other-api/write:wallet';
    expect(scopesOf({ scope }, 'wallet-api/')).toEqual(new Set(['read:wallet']));
    expect(scopesOf({ scope }, 'other-api/')).toEqual(new Set(['write:wallet']));
    expect(scopesOf({ scope })).toEqual(new Set(['wallet-api/read:wallet', 'other-api/write:wallet']));
  });
});
