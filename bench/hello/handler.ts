/**
 * A hello-world function, the shape the public Lambda cold-start benchmarks deploy: the reference
 * from which the measured import time of the other bundles is carried over to Lambda.
 */

/** Answers without doing anything. */
export const handler = async (): Promise<{ statusCode: number; body: string }> => ({
  statusCode: 200,
  body: '',
});
