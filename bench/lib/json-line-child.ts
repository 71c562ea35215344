import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { driveChild, type IpcChild } from './ipc-child.js';

/**
 * A child process (the Go farm, the Go registrar) driven like an IpcChild,
 * but over JSON lines: `{id, op, ...}` on its stdin, `{id, ok, result|error}`
 * on its stdout, and `{id: 0}` once it is ready. Closing stdin ends it.
 */
export function startJsonLineChild(binary: string, args: string[], label: string): Promise<IpcChild> {
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  return driveChild(child, label, {
    send: (request) => child.stdin.write(`${JSON.stringify(request)}\n`),
    onAnswer: (handle) =>
      createInterface({ input: child.stdout }).on('line', (line) => {
        let answer: Parameters<typeof handle>[0];
        try {
          answer = JSON.parse(line);
        } catch {
          return; // not an answer (a stray line)
        }
        handle(answer);
      }),
    end: () => child.stdin.end(),
    labelErrors: true,
  });
}
