import { execFile } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * Whether the process `pid` listens on TCP `port`: how DynamoDB Local's start tells its own Java
 * from a process that took the port between the moment it was found free and Java's bind, which
 * would answer the readiness probe in its place (./dynamodb-local.ts). Java prints nothing once it
 * is bound (its configuration, port included, comes before the bind), so only the socket can say.
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  return process.platform === 'linux' ? listensOnLinux(pid, port) : listensByLsof(pid, port);
}

/** The socket inodes of `pid`'s descriptors, against the listening sockets of its network namespace. */
async function listensOnLinux(pid: number, port: number): Promise<boolean> {
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const inodes = new Set<string>();
  await Promise.all(
    descriptors.map(async (fd) => {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    }),
  );
  if (inodes.size === 0) return false;
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      const localPort = Number.parseInt(fields[1]?.split(':').at(-1) ?? '', 16);
      if (fields[3] === '0A' && localPort === port && inodes.has(fields[9] ?? '')) return true;
    }
  }
  return false;
}

/** Elsewhere (macOS): lsof, which exits 1 when it finds no such socket. */
function listensByLsof(pid: number, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      'lsof',
      ['-nP', '-a', '-p', String(pid), `-iTCP:${port}`, '-sTCP:LISTEN', '-t'],
      (error, stdout) => {
        // Without lsof nothing can tell: trust the probe, as before this check existed.
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') resolve(true);
        else resolve(!error && stdout.trim() !== '');
      },
    );
  });
}
