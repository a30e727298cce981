import { inject } from 'vitest';

// Runs before each test file is imported, so handler modules read this at their "cold start".
Object.assign(process.env, inject('env'));
