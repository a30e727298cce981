import { LOCAL_AWS_ENV } from './dynamodb-local.ts';

/** What the local "deployment" is called in method ARNs, function ARNs and request contexts. */
export const LOCAL_DEPLOYMENT = {
  region: LOCAL_AWS_ENV.AWS_REGION,
  accountId: '000000000000',
  apiId: 'local',
  stage: 'local',
} as const;
