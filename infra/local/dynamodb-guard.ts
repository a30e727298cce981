/**
 * Keeps a DynamoDB Local (Java) started by this process from outliving it: Java does not die with
 * its parent, so a process killed outright would leave it running and holding its port.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Socket } from 'node:net';

/**
 * Makes sure the DynamoDB Local this process started at `endpoint` does not outlive it, even if
 * this process is killed outright; call `dismiss` once it has been stopped. `pid` is Java's.
 */
export function guardDynamoDbLocal(endpoint: string): { readonly pid: number | undefined; dismiss(): void } {
  const pid = findDynamoDbLocalPid(endpoint);
  const watchdog = pid === undefined ? undefined : startOrphanWatchdog(pid);
  return { pid, dismiss: () => watchdog?.kill() };
}

/**
 * The PID of the DynamoDB Local child listening at `endpoint`. `startDynamoDbLocal` keeps its
 * ChildProcess to itself, so it is found among this process's children by its command line.
 */
function findDynamoDbLocalPid(endpoint: string): number | undefined {
  const port = new URL(endpoint).port;
  const isOurs = (ppid: number, args: string) =>
    ppid === process.pid && args.includes('DynamoDBLocal') && args.includes(`-port ${port}`);
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
        if (isOurs(ppid, args)) return Number(entry);
      } catch {
        // The process ended while the list was read.
      }
    }
    return undefined;
  } catch {
    // No /proc (macOS): ask ps.
  }
  try {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).split(
      '\n',
    )) {
      const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      if (pid && ppid && args && isOurs(Number(ppid), args)) return Number(pid);
    }
  } catch {
    // Without ps the watchdog cannot be set up; a clean stop still ends DynamoDB Local.
  }
  return undefined;
}

/**
 * A tiny watchdog process holds a pipe from this one; when the pipe closes, for whatever reason
 * (SIGKILL, a crash that skips the exit handlers), it ends Java.
 */
function startOrphanWatchdog(javaPid: number): ChildProcess {
  const script = `
    const pid = Number(process.argv[1]);
    // Ctrl+C reaches the whole process group; the parent's own shutdown ends Java then.
    process.on('SIGINT', () => {});
    process.stdin.on('data', () => {});
    process.stdin.on('close', () => {
      try { process.kill(pid, 'SIGTERM'); } catch {}
      setTimeout(() => { try { process.kill(pid, 'SIGKILL'); } catch {} process.exit(0); }, 5000).unref();
    });`;
  const watchdog = spawn(process.execPath, ['-e', script, String(javaPid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the watchdog nor its pipe may keep this process alive.
  watchdog.unref();
  if (watchdog.stdin instanceof Socket) watchdog.stdin.unref();
  return watchdog;
}
