/**
 * The end-to-end floor as a server: `node bench/floor-server.ts <port>`, in its own process with the
 * local stack's environment (table names, DynamoDB Local's endpoint). A bare node:http server
 * that answers each route's request with nothing but the route's DynamoDB calls
 * (`floorOperations`), made with the functions' own client (`createDocumentClient`). Every call
 * through the gateway pays an HTTP hop, a process wake-up and a server's parsing; so does this one,
 * and what remains between the two is the code under test (gateway emulation, middy, validation,
 * use case, request line). It prints `ready` on stdout once listening.
 */
import { createServer } from 'node:http';
import { Router } from '#infra/local/router.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { routes } from '#shared/routes.ts';
import { CALLER_HEADER, floorOperations } from './floor.ts';

const port = Number(process.argv[2]);
// Routed as the gateway routes: by the route table.
const router = new Router(routes);
const client = createDocumentClient();
const operations = floorOperations(
  client,
  process.env[tables.pets.envVar] as string,
  process.env[tables.wallets.envVar] as string,
);

const server = createServer((request, response) => {
  // The body is read as the gateway reads it; the floor of a route that writes what the body says
  // (update-pet) parses it, the others leave it alone.
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const matched = router.match(request.method ?? 'GET', (request.url ?? '/').split('?')[0] as string);
    const operation = matched && operations[matched.route.functionDir];
    const sub = request.headers[CALLER_HEADER];
    if (!operation || typeof sub !== 'string') {
      response.writeHead(404, { 'content-length': 0 }).end();
      return;
    }
    const { petId = '0', transferId = '' } = matched.pathParameters ?? {};
    const body = chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
    operation({ sub, petId: Number(petId), transferId, ...(body === undefined ? {} : { body }) }).then(
      () => response.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}'),
      (error: unknown) => {
        const body = String(error);
        response.writeHead(500, { 'content-length': Buffer.byteLength(body) }).end(body);
      },
    );
  });
});
server.keepAliveTimeout = 5_000;
server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  client.destroy();
});
