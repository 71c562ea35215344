import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { waitFor } from '../wait-for.js';

/** The Python berth's tests use for peers Node cannot be (here: a unix datagram socket). */
const PYTHON = '/usr/bin/python3';

/**
 * Binds a unix datagram socket, as systemd's NOTIFY_SOCKET is, and prints
 * each datagram as one JSON string per line. Node cannot bind a SOCK_DGRAM
 * unix socket, so the receiver is a small Python process.
 */
const RECEIVER = `
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps("bound"), flush=True)
while True:
    print(json.dumps(s.recv(65536).decode("utf-8", "replace")), flush=True)
`;

/** A NOTIFY_SOCKET receiver and the datagrams it got. */
export interface NotifyReceiver {
  path: string;
  /** Each datagram's text (`READY=1\nSTATUS=...`), in arrival order. */
  messages: string[];
  /** Every `KEY=value` line received, in order. */
  fields(): string[];
  stop(): Promise<void>;
}

/** Whether the receiver can run here (it needs /usr/bin/python3). */
export function notifyReceiverAvailable(): boolean {
  return existsSync(PYTHON);
}

/** Starts a receiver bound at `path` (which must not exist yet). */
export async function startNotifyReceiver(path: string): Promise<NotifyReceiver> {
  const child: ChildProcess = spawn(PYTHON, ['-c', RECEIVER, path], { stdio: ['ignore', 'pipe', 'pipe'] });
  const messages: string[] = [];
  let bound = false;
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const text = JSON.parse(line) as string;
      if (!bound && text === 'bound') bound = true;
      else messages.push(text);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor('the notify receiver to bind', () => {
    if (child.exitCode !== null) throw new Error(`notify receiver exited: ${stderr}`);
    return bound;
  });
  return {
    path,
    messages,
    fields: () => messages.flatMap((m) => m.split('\n')),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
