/** The wallet addresses the OpenAPI examples use. Addresses are token subs; identity providers such as Cognito make them UUIDs. */
export const ALICE = '7d0f6c1e-4b0a-4f0e-9c3d-2a5b8e6f1c42';
export const BOB = '0b9e3a57-61c4-4d2f-8e7a-5c1d9f3b2e60';
