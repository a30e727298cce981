/**
 * `npm run screenshot`: retakes `docs/images/api-docs.png`, the README's picture of the reference
 * page, from the page the running local stack serves (`npm start`; the one on PORT, else the only
 * one running), in the machine's Chromium or Chrome through playwright-core, found as the browser
 * test finds it (test/support/browser.ts). The whole page, so that every route group shows.
 */
import { fileURLToPath } from 'node:url';
import { chooseRunningStack, describeChoice } from '#infra/local/stack-record.ts';
import { routes } from '#shared/routes.ts';
import { launchChromium } from '../test/support/browser.ts';

const IMAGE = fileURLToPath(new URL('../docs/images/api-docs.png', import.meta.url));

const choice = await chooseRunningStack();
if (!choice.stack) {
  process.stderr.write(`screenshot: ${choice.problem}\n`);
  process.exit(2);
}
process.stderr.write(`screenshot: of the page of ${describeChoice(choice)}\n`);

const browser = await launchChromium();
try {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1000, height: 760 });
  await page.goto(`${choice.stack.baseUrl}/api/docs`);
  // Swagger UI renders the operations once it has fetched the document: wait for all of them.
  await page.waitForFunction(
    `document.querySelectorAll('.opblock-summary-operation-id').length === ${routes.length}`,
    undefined,
    { timeout: 30_000 },
  );
  await page.screenshot({ path: IMAGE, fullPage: true });
  process.stderr.write(`screenshot: wrote ${IMAGE}\n`);
} finally {
  await browser.close();
}
