import { spawn } from 'node:child_process';
import { lstat } from 'node:fs/promises';

/**
 * Leaves a real unix socket file at `path` with nobody listening, as a plugin
 * that crashed (or a reboot) does. A child process binds the socket and is
 * killed with SIGKILL, so nothing gets the chance to unlink it.
 */
export async function createStaleSocket(path: string): Promise<void> {
  const script = [
    "const net = require('node:net');",
    'const server = net.createServer();',
    "server.listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'));",
  ].join('\n');
  const child = spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
  const stats = await lstat(path).catch(() => undefined);
  if (stats === undefined || !stats.isSocket()) {
    throw new Error(`could not leave a stale socket at ${path}${stderr ? `: ${stderr.trim()}` : ''}`);
  }
}
