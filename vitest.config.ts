import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    setupFiles: ['test/support/worker-env.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Empty suites and forgotten `.only` must fail the run, not pass it.
    passWithNoTests: false,
    allowOnly: false,
    // Functions log every rejection; show those lines only for tests that fail.
    silent: 'passed-only',
    projects: [
      {
        // `npm run test:unit`: no DynamoDB Local, no gateway, no browser; in seconds.
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'source',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      {
        // An end-to-end pass of every route again, against the gateway running the synthesized
        // bundles, each function in execution environments of its own: what `cdk deploy` ships,
        // before it ships.
        extends: true,
        test: {
          name: 'bundled',
          include: ['test/e2e/**/*.test.ts'],
          // What is the same whichever way the functions run, so once (in `source`) is enough: the
          // gateway's own answers and its authorizer cache, the contract properties, the token
          // command, the generated clients (ours and the Petstore's), `npm start` (which starts processes of its own), and a
          // wallet many pay at once (the ledger's contention, whose load beside the source
          // project's own would measure this machine's two cores rather than the bundles).
          exclude: [
            'test/e2e/contract-properties.test.ts',
            'test/e2e/gateway.test.ts',
            'test/e2e/hot-wallet.test.ts',
            // Its balance polled while many pay it: the same contention as the hot wallet's. A
            // project of its own with a later `groupOrder` still ran beside the others (and failed
            // there, while it passed alone against the bundles), so it runs in `source` only.
            'test/e2e/balance-while-posting.test.ts',
            'test/e2e/petstore-client.test.ts',
            'test/e2e/start-command.test.ts',
            'test/e2e/token-command.test.ts',
            'test/e2e/token-lifetime.test.ts',
            'test/e2e/typed-client.test.ts',
            'test/e2e/webhook-delivery-load.test.ts',
          ],
          globalSetup: ['test/support/global-setup-bundled.ts'],
        },
      },
    ],
  },
});
