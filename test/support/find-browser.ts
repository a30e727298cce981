/**
 * Prints the browser the browser tests would use and exits 0, or says what to install and exits 1:
 * how `.ci/run` decides to install Chromium, by the very rules the tests follow.
 */
import { NoBrowserError, requireBrowser } from './browser.ts';

try {
  console.log(requireBrowser().found);
} catch (error) {
  if (!(error instanceof NoBrowserError)) throw error;
  console.error(error.message);
  process.exit(1);
}
