/**
 * A plugin farm: one child process serving many registration sockets, so a
 * benchmark or test sees berth against plugins that do not share its event
 * loop. Every socket is a real HTTP/2 gRPC server speaking
 * pluginregistration.Registration (GetInfo, NotifyRegistrationStatus),
 * encoded by hand here: a second, independent implementation of the wire.
 *
 * Like C-core gRPC, grpc-js and Go, each server bind()s its socket before it
 * listen()s; `gapMs` widens that gap on purpose. Commands arrive as IPC
 * messages (see plugin-farm.ts); the farm answers each with one message.
 */
import { unlinkSync } from 'node:fs';
import http2 from 'node:http2';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';

interface PipeHandle {
  bind(path: string): number;
  close(callback?: () => void): void;
}
const { Pipe, constants: PipeConstants } = (
  process as unknown as {
    binding(name: 'pipe_wrap'): { Pipe: new (type: number) => PipeHandle; constants: { SERVER: number } };
  }
).binding('pipe_wrap');

interface Served {
  path: string;
  type: string;
  name: string;
  server: http2.Http2Server | undefined;
  sessions: Set<http2.ServerHttp2Session>;
  /** HTTP/2 connections accepted, ever. */
  connections: number;
  /** A bound handle that was never listened on: a stale socket file. */
  pipe: PipeHandle | undefined;
  getInfo: number;
  notifyTrue: number;
  notifyFalse: number;
  readyAt: number;
  firstNotifyTrueAt: number;
  /** GetInfo answers this long after it arrived (a plugin starved of CPU, or a slow handler). */
  getInfoDelayMs: number;
}

const sockets = new Map<string, Served>();
const notifyWaiters = new Set<() => void>();
const now = () => performance.timeOrigin + performance.now();

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

function stringField(field: number, value: string): number[] {
  if (value === '') return [];
  const bytes = Buffer.from(value, 'utf8');
  return [(field << 3) | 2, ...varint(bytes.length), ...bytes];
}

function pluginInfo(served: Served): Buffer {
  return Buffer.from([
    ...stringField(1, served.type),
    ...stringField(2, served.name),
    ...stringField(4, 'v1'),
  ]);
}

/** RegistrationStatus: field 1 bool plugin_registered. */
function decodeRegistered(message: Buffer): boolean {
  let i = 0;
  while (i < message.length) {
    const tag = message[i++] ?? 0;
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) {
      let value = 0;
      let shift = 0;
      let byte = 0;
      do {
        byte = message[i++] ?? 0;
        value |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      if (field === 1) return value !== 0;
    } else if (wire === 2) {
      let length = 0;
      let shift = 0;
      let byte = 0;
      do {
        byte = message[i++] ?? 0;
        length |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      i += length;
    } else return false;
  }
  return false;
}

function frame(message: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

function handle(served: Served, stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('error', () => {});
  stream.on('end', () => {
    // The client may have gone (cancelled, or its session closed) after sending its request.
    if (stream.destroyed || stream.closed) return;
    const body = Buffer.concat(chunks).subarray(5);
    const path = headers[':path'];
    let reply: Buffer;
    if (path === '/pluginregistration.Registration/GetInfo') {
      served.getInfo += 1;
      reply = pluginInfo(served);
    } else if (path === '/pluginregistration.Registration/NotifyRegistrationStatus') {
      if (decodeRegistered(body)) {
        served.notifyTrue += 1;
        if (served.firstNotifyTrueAt === 0) {
          served.firstNotifyTrueAt = now();
          for (const wake of notifyWaiters) wake();
          notifyWaiters.clear();
        }
      } else served.notifyFalse += 1;
      reply = Buffer.alloc(0);
    } else {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () =>
        stream.sendTrailers({ 'grpc-status': '12', 'grpc-message': 'unimplemented' }),
      );
      stream.end();
      return;
    }
    const answer = () => {
      if (stream.destroyed || stream.closed) return;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame(reply));
    };
    const delayed = path === '/pluginregistration.Registration/GetInfo' && served.getInfoDelayMs > 0;
    if (delayed) setTimeout(answer, served.getInfoDelayMs);
    else answer();
  });
}

function entry(path: string, type: string, getInfoDelayMs = 0): Served {
  return {
    path,
    type,
    name: basename(path).replace(/\.sock$/, ''),
    server: undefined,
    sessions: new Set(),
    connections: 0,
    pipe: undefined,
    getInfo: 0,
    notifyTrue: 0,
    notifyFalse: 0,
    readyAt: 0,
    firstNotifyTrueAt: 0,
    getInfoDelayMs,
  };
}

function bind(path: string): PipeHandle {
  const pipe = new Pipe(PipeConstants.SERVER);
  const err = pipe.bind(path);
  if (err !== 0) throw new Error(`bind ${path} failed: errno ${err}`);
  return pipe;
}

/** bind(), wait `gapMs`, listen(): the order real gRPC servers use. */
function serve(path: string, type: string, gapMs: number, getInfoDelayMs: number): Promise<void> {
  const served = entry(path, type, getInfoDelayMs);
  sockets.set(path, served);
  const pipe = bind(path);
  return new Promise((resolve, reject) => {
    const listen = () => {
      const server = http2.createServer();
      server.on('stream', (stream, headers) => handle(served, stream, headers));
      server.on('session', (session) => {
        served.sessions.add(session);
        served.connections += 1;
        session.once('close', () => served.sessions.delete(session));
      });
      server.on('sessionError', () => {});
      server.once('error', reject);
      served.server = server;
      server.listen({ _handle: pipe } as unknown as number, () => {
        served.readyAt = now();
        resolve();
      });
    };
    if (gapMs > 0) setTimeout(listen, gapMs);
    else listen();
  });
}

/**
 * Shuts a server down the way gRPC servers do: stop listening (the socket
 * file goes), then close the open connections (an idle one would otherwise
 * keep node's server.close() waiting forever).
 */
async function close(served: Served): Promise<void> {
  sockets.delete(served.path);
  const server = served.server;
  const closed =
    server === undefined ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve()));
  served.pipe?.close();
  try {
    unlinkSync(served.path);
  } catch {
    // already gone with its handle
  }
  for (const session of served.sessions) session.close();
  await closed;
}

type Command =
  | { id: number; op: 'serve'; paths: string[]; type: string; gapMs: number; getInfoDelayMs: number }
  | { id: number; op: 'stale'; paths: string[] }
  | { id: number; op: 'remove'; paths: string[] }
  | { id: number; op: 'dropConnections'; paths: string[] }
  | { id: number; op: 'stats' }
  | { id: number; op: 'notified'; path: string; timeoutMs: number }
  | { id: number; op: 'clock' }
  | { id: number; op: 'reset' };

async function run(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'serve':
      await Promise.all(
        command.paths.map((path) => serve(path, command.type, command.gapMs, command.getInfoDelayMs)),
      );
      return { readyAt: command.paths.map((path) => sockets.get(path)?.readyAt ?? 0) };
    case 'stale':
      for (const path of command.paths) {
        const served = entry(path, '');
        served.pipe = bind(path);
        sockets.set(path, served);
      }
      return {};
    case 'remove':
      await Promise.all(
        command.paths.map((path) => {
          const served = sockets.get(path);
          return served === undefined ? undefined : close(served);
        }),
      );
      return {};
    case 'dropConnections':
      // The server keeps listening; only its open connections go.
      for (const path of command.paths)
        for (const session of sockets.get(path)?.sessions ?? []) session.destroy();
      return {};
    case 'stats':
      return {
        sockets: [...sockets.values()]
          .filter((s) => s.pipe === undefined)
          .map(
            ({
              path,
              getInfo,
              notifyTrue,
              notifyFalse,
              readyAt,
              firstNotifyTrueAt,
              sessions,
              connections,
            }) => ({
              path,
              connections,
              openConnections: sessions.size,
              getInfo,
              notifyTrue,
              notifyFalse,
              readyAt,
              firstNotifyTrueAt,
            }),
          ),
        cpuUserMs: process.cpuUsage().user / 1000,
      };
    case 'notified': {
      // Resolves with the socket's ready -> first Notify(true) time, once it has one.
      const served = sockets.get(command.path);
      if (served === undefined) throw new Error(`not served: ${command.path}`);
      const deadline = now() + command.timeoutMs;
      while (served.firstNotifyTrueAt === 0) {
        if (now() > deadline)
          throw new Error(`no Notify(true) within ${command.timeoutMs} ms: ${command.path}`);
        await new Promise<void>((resolve) => {
          notifyWaiters.add(resolve);
          setTimeout(resolve, 50);
        });
      }
      return { readyAt: served.readyAt, notifiedAt: served.firstNotifyTrueAt };
    }
    case 'clock':
      return { now: now() };
    case 'reset':
      for (const served of sockets.values()) {
        served.getInfo = 0;
        served.notifyTrue = 0;
        served.notifyFalse = 0;
        served.firstNotifyTrueAt = 0;
      }
      return {};
  }
}

process.on('message', (message: Command) => {
  run(message).then(
    (result) => process.send?.({ id: message.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: message.id, ok: false, error: String(err) }),
  );
});
process.on('disconnect', () => {
  for (const served of sockets.values()) {
    try {
      unlinkSync(served.path);
    } catch {}
  }
  process.exit(0);
});
process.send?.({ id: 0, ok: true, result: 'ready' });
