import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '#functions/api-docs/handler.ts';
import { defaultServiceSettings } from '#infra/environment.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes.ts';
import { type Browser, launchChromium } from '../support/browser.ts';
import { uniqueSub } from '../support/events.ts';
import { call, expectProblem, gateway, tokenFor } from './http.ts';

describe('GET /api/docs in a browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows every operation of the document and sends an authorized request from "try it" that gets 200', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.context.newPage();
    // What the page must not do: break its own policy, fail a script, or leave the gateway's origin.
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(gateway.baseUrl) && !url.startsWith('data:')) problems.push(`left origin: ${url}`);
    });

    const response = await page.goto(`${gateway.baseUrl}/api/docs`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);

    // Swagger UI shows the operationId of each operation it rendered from /api/openapi.json.
    // The routes' operations, and the webhook payloads the document describes (OpenAPI `webhooks`).
    const webhookIds = Object.values(buildOpenApiDocument(defaultServiceSettings).webhooks ?? {}).flatMap(
      (item) => Object.values(item as Record<string, { operationId: string }>).map((op) => op.operationId),
    );
    const expectedIds = [...routes.map((r) => r.operationId), ...webhookIds].sort();
    const ids = page.locator('.opblock-summary-operation-id');
    await expect.poll(() => ids.count(), { timeout: 15_000 }).toBe(expectedIds.length);
    expect((await ids.allTextContents()).sort()).toEqual(expectedIds);
    // Every group of the document (its tags), none left in Swagger UI's "default".
    const groups = await page
      .locator('.opblock-tag-section .opblock-tag')
      .evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')));
    expect(groups).toEqual(buildOpenApiDocument(defaultServiceSettings).tags.map((tag) => tag.name));
    // The server as the URL requests go to, not the document's relative `..`.
    expect(await page.locator('.servers select option').allTextContents()).toEqual([
      `${gateway.baseUrl}/ - The API serving this document`,
    ]);

    const sub = uniqueSub('docs');
    const token = await tokenFor('read:wallet', { sub });
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input[type="text"]').fill(token);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();

    // Swagger UI names an operation's element after its tag.
    const operation = page.locator('#operations-wallet-getBalance');
    await operation.locator('.opblock-summary-control').click();
    await operation.locator('.try-out__btn').click();
    const sent = page.waitForRequest((request) => request.url().endsWith('/api/wallet/balance'));
    await operation.locator('.execute').click();
    const request = await sent;
    // The relative server `..` resolved against the document's URL: the gateway serving the page.
    expect(request.url()).toBe(`${gateway.baseUrl}/api/wallet/balance`);
    expect(await request.headerValue('authorization')).toBe(`Bearer ${token}`);

    const live = operation.locator('.live-responses-table .response');
    // The answer takes a cold authorizer and function: as long to wait as for the page itself.
    await expect
      .poll(() => live.locator('.response-col_status').textContent(), { timeout: 15_000 })
      .toMatch(/^\s*200/);
    const body = JSON.parse(
      (await live.locator('.response-col_description pre').first().textContent()) ?? '',
    );
    expect(body).toMatchObject({ address: sub });
    expect(problems).toEqual([]);
  });
});

describe('GET /api/docs/{asset}', () => {
  it('serves the scripts and style sheet the page links, with a long cache life', async () => {
    const page = await call('GET', '/api/docs');
    const links = [...page.text.matchAll(/(?:src|href)="docs\/([^"]+)"/g)].map((m) => m[1]);
    expect(links).toHaveLength(3);
    for (const name of links) {
      const asset = await call('GET', `/api/docs/${name}`);
      expect(asset.status, name).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      expect(asset.headers.get('cache-control')).toContain('immutable');
    }
  });

  it('answers 404 problem+json for a name the page does not link', async () => {
    expectProblem(await call('GET', '/api/docs/swagger-ui-bundle.js'), 404);
  });
});
