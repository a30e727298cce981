import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/worker-env.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Empty suites and forgotten `.only` must fail the run, not pass it.
    passWithNoTests: false,
    allowOnly: false,
    // Functions log every rejection; show those lines only for tests that fail.
    silent: 'passed-only',
  },
});
