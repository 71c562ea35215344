import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import {
  type ConnectDone,
  connectNetPipeStream,
  connectPipeStream,
  type PipeStream,
  pipeStreamIsRaw,
} from './pipe-stream.js';

type Connect = (path: string, done: ConnectDone) => PipeStream;

/** A server on a fresh socket path; `onSocket` gets each accepted connection. */
async function serve(t: TestContext, onSocket: (socket: Socket) => void): Promise<string> {
  const dir = createTempDir('berth-pipe-stream-');
  const accepted = new Set<Socket>();
  const server: Server = createServer((socket) => {
    accepted.add(socket);
    socket.on('error', () => {});
    onSocket(socket);
  });
  const path = dir.join('peer.sock');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  t.after(async () => {
    // Hooks run in the order they were added: the clients may still be open here.
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    dir.remove();
  });
  return path;
}

/** Connects and waits for the verdict; the stream is destroyed after the test. */
async function open(
  t: TestContext,
  connect: Connect,
  path: string,
): Promise<{ stream: PipeStream; error: NodeJS.ErrnoException | undefined }> {
  let stream: PipeStream | undefined;
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    stream = connect(path, resolve);
  });
  const opened = stream as PipeStream;
  t.after(() => opened.destroy());
  return { stream: opened, error };
}

function closed(stream: PipeStream): Promise<void> {
  return new Promise((resolve) => stream.onClose(resolve));
}

describe('pipe streams: the registration connection without net.Socket', () => {
  it("node's pipe and stream bindings are there on this node, so the raw stream is the one in use", () => {
    assert.equal(pipeStreamIsRaw(), true);
  });

  for (const [kind, connect] of [
    ['raw', connectPipeStream],
    ['net', connectNetPipeStream],
  ] as const) {
    describe(`on ${kind === 'raw' ? "node's pipe binding" : 'net.Socket'}`, () => {
      it("fails a connect with node's own error: code, errno, syscall and text", async (t) => {
        const dir = createTempDir('berth-pipe-stream-');
        t.after(() => dir.remove());
        await createStaleSocket(dir.join('stale.sock'));
        for (const [name, code] of [
          ['stale.sock', 'ECONNREFUSED'],
          ['missing.sock', 'ENOENT'],
        ] as const) {
          const path = dir.join(name);
          const { stream, error } = await open(t, connect, path);
          assert.equal(error?.code, code, name);
          assert.equal(error?.syscall, 'connect');
          assert.equal(typeof error?.errno, 'number');
          assert.equal(error?.message, `connect ${code} ${path}`);
          await waitFor(`the failed ${name} stream closed`, () => stream.destroyed);
        }
      });

      it('carries bytes both ways, and replays what arrived before the reader was set', async (t) => {
        const path = await serve(t, (socket) => {
          socket.write('hello');
          socket.on('data', (chunk) => socket.write(Buffer.concat([Buffer.from('echo:'), chunk])));
        });
        const { stream, error } = await open(t, connect, path);
        assert.equal(error, undefined);
        await waitFor('the greeting read before any reader', () => stream.bytesRead >= 5);
        const got: Buffer[] = [];
        stream.setReader((chunk) => got.push(Buffer.from(chunk)));
        await waitFor('the greeting replayed', () => Buffer.concat(got).toString() === 'hello');
        stream.write(Buffer.from('ping'));
        await waitFor('the echo', () => Buffer.concat(got).toString() === 'helloecho:ping');
      });

      it('sends what was written while corked in one write', async (t) => {
        const reads: string[] = [];
        const path = await serve(t, (socket) => socket.on('data', (chunk) => reads.push(chunk.toString())));
        const { stream } = await open(t, connect, path);
        stream.cork();
        for (const part of ['a', 'b', 'c']) stream.write(Buffer.from(part));
        stream.uncork();
        await waitFor('the corked bytes', () => reads.join('') === 'abc');
        assert.deepEqual(reads, ['abc'], 'one read: the three writes left together');
      });

      it('queues writes made before the connect completes', async (t) => {
        let received = '';
        const path = await serve(t, (socket) =>
          socket.on('data', (chunk) => {
            received += chunk.toString();
          }),
        );
        let verdict: NodeJS.ErrnoException | undefined | 'pending' = 'pending';
        const stream = connect(path, (error) => {
          verdict = error;
        });
        t.after(() => stream.destroy());
        stream.write(Buffer.from('early'));
        assert.equal(verdict, 'pending', 'the verdict comes later, never inside connect');
        await waitFor('the early write delivered', () => received === 'early');
        assert.equal(verdict, undefined);
      });

      it('end() closes only once everything written has left, a large write included', async (t) => {
        const total = 8 * 1024 * 1024;
        let peer: Socket | undefined;
        let received = 0;
        let ended = false;
        const path = await serve(t, (socket) => {
          peer = socket;
          socket.pause(); // the send buffer fills: libuv finishes the write later
          socket.on('data', (chunk) => {
            received += chunk.length;
          });
          socket.on('end', () => {
            ended = true;
          });
        });
        const { stream } = await open(t, connect, path);
        const done = closed(stream);
        stream.write(Buffer.alloc(total, 7));
        stream.end();
        stream.write(Buffer.from('after end')); // dropped
        await waitFor('the peer accepted', () => peer !== undefined);
        peer?.resume();
        await done;
        await waitFor('the peer read it all, then EOF', () => ended);
        assert.equal(received, total);
      });

      it('hears the peer close, once, and is destroyed', async (t) => {
        let peer: Socket | undefined;
        const path = await serve(t, (socket) => {
          peer = socket;
        });
        const { stream } = await open(t, connect, path);
        let heard = 0;
        stream.onClose(() => {
          heard += 1;
        });
        await waitFor('the peer accepted', () => peer !== undefined);
        peer?.destroy();
        await waitFor('the close heard', () => heard === 1);
        assert.equal(stream.destroyed, true);
        stream.write(Buffer.from('to nobody')); // no throw, no second close
        stream.destroy();
        let late = false;
        stream.onClose(() => {
          late = true;
        });
        await waitFor('a listener added after the close runs too', () => late);
        assert.equal(heard, 1);
      });

      it('a stream destroyed while connecting never reports the connect, and closes', async (t) => {
        const path = await serve(t, () => {});
        let verdicts = 0;
        const stream = connect(path, () => {
          verdicts += 1;
        });
        const done = closed(stream);
        stream.destroy();
        await done;
        assert.equal(stream.destroyed, true);
        // A second connect to the same server completes: the first one's verdict would have come by then.
        const other = await open(t, connect, path);
        assert.equal(other.error, undefined);
        assert.equal(verdicts, 0);
      });
    });
  }
});

describe('BERTH_NET_SOCKETS=1: every plugin connection on net, whatever the node', () => {
  it('a child process with the switch uses net for the probe and the stream, and a registration round trip works', async (t) => {
    const dir = createTempDir('berth-net-sockets-');
    t.after(() => dir.remove());
    const here = (name: string) => new URL(name, import.meta.url).href;
    // The child imports the modules fresh, so the switch is read at their load.
    const script = `
      import { pipeStreamIsRaw } from ${JSON.stringify(here('./pipe-stream.js'))};
      import { rawUnixConnect } from ${JSON.stringify(here('./raw-unix-connect.js'))};
      import { dialRegistration } from ${JSON.stringify(here('./dial.js'))};
      import { createRegistrationServer } from ${JSON.stringify(here('./registration-server.js'))};
      const info = { type: 'T', name: 'n', endpoint: '', supportedVersions: ['v1'] };
      const server = createRegistrationServer({ socketPath: ${JSON.stringify(dir.join('p.sock'))}, info });
      await server.start();
      const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
      const got = await conn.getInfo({ timeoutMs: 5_000 });
      await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
      const status = await server.nextStatus();
      conn.close();
      await server.stop();
      console.log(JSON.stringify({ raw: pipeStreamIsRaw(), probe: typeof rawUnixConnect, name: got.name, status }));
    `;
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { env: { ...process.env, BERTH_NET_SOCKETS: '1' }, timeout: 60_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1) ?? ''), {
      raw: false,
      probe: 'undefined',
      name: 'n',
      status: { pluginRegistered: true, error: '' },
    });
  });
});
