import type { TestProject } from 'vitest/node';
import { setupWithGateway } from './global-setup.ts';

/**
 * The `bundled` project: the same set-up, but the gateway runs each function's bundle from the
 * synthesized `cdk.out` (synthesized first when older than the sources, as `npm start -- --bundled`
 * does), so that a bundling mistake fails the end-to-end suite before it reaches AWS.
 */
export default function setup(project: TestProject) {
  return setupWithGateway(project, { synth: 'if-stale' });
}
