/** The local gateway's HTTP server: listening, the address clients use, and closing it promptly. */
import type { Server } from 'node:http';

/** The address clients use for a listening host: a wildcard host is reached on loopback. */
export function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Local clients keep connections alive; waiting for them would make stopping take as long as they like.
  server.closeAllConnections();
  await closed;
}
