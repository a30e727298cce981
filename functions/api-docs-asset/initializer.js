// Starts Swagger UI on the reference page (`GET /api/docs`). A file of its own, served by the
// asset function, because the page's Content-Security-Policy allows scripts from 'self' only.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  // Beside the page, wherever the API is mounted (a stage path, a custom domain's base path).
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  // The default posts the document to an online validator: this page makes no third-party requests.
  validatorUrl: null,
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  // A token pasted into "Authorize" stays in this tab's memory, never in storage.
  persistAuthorization: false,
  // The document names its server relative to itself (`..`, right wherever the API is mounted);
  // Swagger UI would show that as it is. Shown resolved: the URL "Try it out" sends requests to.
  responseInterceptor: (response) => {
    if (!response.url.endsWith('/openapi.json') || typeof response.text !== 'string') return response;
    try {
      const document = JSON.parse(response.text);
      for (const server of document.servers ?? []) server.url = new URL(server.url, response.url).href;
      response.text = JSON.stringify(document);
      response.body = document;
      response.obj = document;
    } catch {
      // Not JSON: Swagger UI reports it as it would have.
    }
    return response;
  },
});
