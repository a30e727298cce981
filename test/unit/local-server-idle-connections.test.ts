import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { DynamoDbProxy, TOUCHES_PATH } from '#infra/local/dynamodb-proxy.ts';
import { JWKS_PATH } from '#infra/local/issuer.ts';
import { startJwksServer } from '#infra/local/jwks-server.ts';

/*
 * A test's fetch to the conflict proxy, sent on a connection left idle over a few seconds of
 * payments, once met "other side closed": the server closed the idle connection (Node's default,
 * 5 s) in the instant the client sent on it. The local servers must keep idle connections open
 * longer than their clients do, so that the client is always the side that closes them.
 */

/** Longer than Node's default keep-alive (5 s, and its 1 s buffer) and undici's (4 s): any client has let go by then. */
const IDLE_MS = 6_500;

/** Sends a GET on `socket` and resolves with the status line of its answer. */
async function get(socket: Socket, path: string): Promise<string> {
  if (socket.readableEnded) throw new Error('The server closed the connection');
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      socket.off('data', onData).off('end', onClose);
      resolve(text.slice(0, text.indexOf('\r\n')));
    };
    const onClose = () => reject(new Error('The server closed the connection'));
    socket.on('data', onData).once('end', onClose);
  });
  socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n`);
  return answer;
}

async function answersAgainAfterIdling(port: number, path: string): Promise<string[]> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  try {
    const first = await get(socket, path);
    await sleep(IDLE_MS);
    return [first, await get(socket, path)];
  } finally {
    socket.destroy();
  }
}

// Never contacted: the touch report is the proxy's own answer.
const proxy = await DynamoDbProxy.start('http://127.0.0.1:9', { conflicts: true });
const jwks = await startJwksServer({ keys: [] });
afterAll(() => Promise.all([proxy.close(), jwks.close()]));

describe('the local servers with a connection their client left idle', () => {
  it('keep it open past their clients own keep-alive, so that a request sent on it is answered', async () => {
    const proxyPort = Number(new URL(proxy.endpoint).port);
    const [viaProxy, viaJwks] = await Promise.all([
      answersAgainAfterIdling(proxyPort, TOUCHES_PATH),
      answersAgainAfterIdling(jwks.port, JWKS_PATH),
    ]);
    expect(viaProxy).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    expect(viaJwks).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
  });
});
