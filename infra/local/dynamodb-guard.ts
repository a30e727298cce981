/**
 * Keeps the DynamoDB Local (Java) this process started from outliving it: Java does not die
 * with its parent, so a process killed outright would leave it running and holding its port.
 */
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';

/**
 * Makes sure the process `pid` (Java, a child of this process) does not outlive this process, even
 * if this one is killed outright; call `dismiss` once it has ended. A tiny watchdog process holds a
 * pipe from this one; when the pipe closes, for whatever reason (SIGKILL, a crash that skips the
 * exit handlers), it ends `pid`.
 */
export function guardDynamoDbLocal(pid: number): { dismiss(): void } {
  const script = `
    const pid = Number(process.argv[1]);
    // Ctrl+C reaches the whole process group (not Java: a group of its own); the parent's own
    // shutdown ends Java then.
    process.on('SIGINT', () => {});
    process.stdin.on('data', () => {});
    process.stdin.on('close', () => {
      try { process.kill(pid, 'SIGTERM'); } catch {}
      setTimeout(() => { try { process.kill(pid, 'SIGKILL'); } catch {} process.exit(0); }, 5000).unref();
    });`;
  const watchdog = spawn(process.execPath, ['-e', script, String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the watchdog nor its pipe may keep this process alive.
  watchdog.unref();
  if (watchdog.stdin instanceof Socket) watchdog.stdin.unref();
  return { dismiss: () => watchdog.kill() };
}
