import { inject } from 'vitest';

// Runs before each test file is imported, so handler modules read this at their "cold start".
Object.assign(process.env, inject('env'));

// The functions' log lines go through console, so vitest shows them only for the tests that fail.
process.env.TELEMETRY_OUTPUT = 'console';
