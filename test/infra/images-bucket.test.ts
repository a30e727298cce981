import { Match, type Template } from 'aws-cdk-lib/assertions';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceApp } from '#infra/app.ts';
import { BINARY_MEDIA_TYPES } from '#shared/http/binary-media.ts';
import { type OperationId, type Route, routes } from '#shared/routes.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { type Json, logicalId, synthesize } from '../support/cdk.ts';

/**
 * The pets' images bucket (stateful stack) and the image functions' grants on it: encrypted,
 * never public, TLS only, its incomplete uploads aborted, and each function exactly its route's
 * S3 action on the images prefix (docs/decisions/pet-images.md).
 */

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Json;
  Principal?: unknown;
}

const routeTable: readonly (Route & { operationId: OperationId })[] = routes;
let built: ServiceApp;
let service: Template;
let stateful: Template;
let bucketId: string;

beforeAll(() => {
  ({ built, service, stateful } = synthesize());
  bucketId = logicalId(built.stateful, built.stateful.imagesBucket as Bucket);
});

/** The statements of the role of a route's function, whatever policy resource holds them. */
function statementsOf(operationId: OperationId): Statement[] {
  const fn = built.service.functions.get(operationId);
  const role = fn?.function.role;
  if (!role) throw new Error(`${operationId} has no role`);
  const roleRef = { Ref: logicalId(built.service, role) };
  return Object.values(service.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([roleRef]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** The bucket's name as the stateful stack sets it, as the parts of an ARN after `arn:<partition>`. */
function bucketNameParts(): unknown[] {
  const name = stateful.toJSON().Resources[bucketId].Properties.BucketName as {
    'Fn::Join': [string, unknown[]];
  };
  const [first, ...rest] = name['Fn::Join'][1];
  return [`:s3:::${first}`, ...rest];
}

describe('the images bucket', () => {
  it('is named after the stage, the account and the region', () => {
    const name = stateful.toJSON().Resources[bucketId].Properties.BucketName;
    expect(name).toEqual({
      'Fn::Join': [
        '',
        ['wallet-catalog-dev-images-', { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }],
      ],
    });
  });

  it('is encrypted at rest, blocks every public access and disables ACLs', () => {
    const bucket = stateful.toJSON().Resources[bucketId].Properties as Json;
    expect(bucket.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
  });

  it('refuses every request without TLS, and TLS below 1.2', () => {
    const policies = Object.values(stateful.findResources('AWS::S3::BucketPolicy')).filter(
      (policy) => JSON.stringify(policy.Properties.Bucket) === JSON.stringify({ Ref: bucketId }),
    );
    expect(policies).toHaveLength(1);
    const statements = (policies[0]?.Properties.PolicyDocument.Statement ?? []) as Statement[];
    const denials = statements.filter((s) => s.Effect === 'Deny');
    expect(denials.map((s) => [s.Action, s.Principal, s.Condition])).toEqual(
      expect.arrayContaining([
        ['s3:*', { AWS: '*' }, { Bool: { 'aws:SecureTransport': 'false' } }],
        ['s3:*', { AWS: '*' }, { NumericLessThan: { 's3:TlsVersion': 1.2 } }],
      ]),
    );
    // Nothing in its policy allows anyone in: the functions' roles carry their own grants.
    expect(
      statements.filter((s) => s.Effect === 'Allow' && JSON.stringify(s.Principal) === '{"AWS":"*"}'),
    ).toEqual([]);
  });

  it('aborts multipart uploads left incomplete after a day', () => {
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [
          {
            Id: 'abort-incomplete-uploads',
            Status: 'Enabled',
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
        ],
      },
    });
  });

  it("is the stateful stack's, emptied and deleted with dev's stack, and named in an output", () => {
    // The service stack's one bucket is the ledger audit's scratch space (its runs' partials, kept
    // two days at most): nothing of the images, nor anything else that must outlive a deployment.
    expect(Object.keys(service.findResources('AWS::S3::Bucket'))).toEqual([
      logicalId(built.service, built.service.ledgerAudit.partials),
    ]);
    expect(stateful.toJSON().Resources[bucketId].DeletionPolicy).toBe('Delete');
    stateful.hasOutput('ImagesBucketName', { Description: Match.stringLikeRegexp('^IMAGES_BUCKET: ') });
  });

  it("is retained with prod's tables", () => {
    const prod = synthesize({ stage: 'prod' });
    const id = logicalId(prod.built.stateful, prod.built.stateful.imagesBucket as Bucket);
    expect(prod.stateful.toJSON().Resources[id].DeletionPolicy).toBe('Retain');
  });
});

describe('the image functions', () => {
  it('gives each function exactly its route-table S3 actions, on the images prefix only (listing on the bucket), and no other function any', () => {
    for (const route of routeTable) {
      const s3 = statementsOf(route.operationId).filter((s) =>
        [s.Action].flat().some((action) => action.startsWith('s3:')),
      );
      if (!route.images) {
        expect(s3, route.operationId).toEqual([]);
        continue;
      }
      const listing = route.images.actions.filter((action) => action === 's3:ListBucket');
      expect(s3, route.operationId).toHaveLength(listing.length > 0 ? 2 : 1);
      const [objects, bucket] = s3 as [Statement, Statement | undefined];
      expect([objects.Action].flat(), route.operationId).toEqual(
        route.images.actions.filter((action) => action !== 's3:ListBucket'),
      );
      for (const grant of s3) {
        expect(grant.Effect).toBe('Allow');
        expect(grant.Condition).toBeUndefined();
      }
      // `arn:…:s3:::<the bucket's name>/pets/*`: objects under the prefix, named as the stateful
      // stack names the bucket.
      expect(objects.Resource, route.operationId).toEqual({
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, ...bucketNameParts(), `/${buckets.images.prefix}*`],
        ],
      });
      if (bucket === undefined) continue;
      // The bucket itself, for ListBucket alone: S3 answers a missing key 404 only to a caller that may list.
      expect([bucket.Action].flat()).toEqual(['s3:ListBucket']);
      expect(bucket.Resource, route.operationId).toEqual({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ...bucketNameParts()]],
      });
    }
    expect(routeTable.find((r) => r.operationId === 'uploadFile')?.images?.actions).toEqual(['s3:PutObject']);
    // Reading an image: its object, and the listing that makes a key nobody was given a 404, not a 403.
    expect(routeTable.find((r) => r.operationId === 'getPetImage')?.images?.actions).toEqual([
      's3:GetObject',
      's3:ListBucket',
    ]);
  });

  it("gives the image functions the bucket's name, and takes images as binary media", () => {
    for (const operationId of ['uploadFile', 'getPetImage'] as const) {
      const fn = built.service.functions.get(operationId);
      const resource = service.toJSON().Resources[logicalId(built.service, fn?.function as never)];
      const variables = resource.Properties.Environment.Variables as Json;
      expect(JSON.stringify(variables[buckets.images.envVar]), operationId).toMatch(
        new RegExp(`Ref${bucketId}`),
      );
      expect(variables, operationId).not.toHaveProperty('S3_ENDPOINT');
    }
    service.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: [...BINARY_MEDIA_TYPES] });
  });

  it('refuses a second images grant for one function', () => {
    expect(() =>
      built.service.functions
        .get('uploadFile')
        ?.grantImages('another-bucket', ['s3:GetObject'], buckets.images.prefix),
    ).toThrow(/already has its images grant/);
  });
});
