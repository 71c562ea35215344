import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import { netProbe, probeConnect } from './probe-connect.js';
import { rawUnixConnect } from './raw-unix-connect.js';

async function listening(t: TestContext, path: string): Promise<{ server: Server; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    socket.on('error', () => {});
    socket.resume();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, accepted: () => accepted };
}

describe('probeConnect: one plain connect, answered without a Socket or an Error object', () => {
  it("node's pipe binding is there on this node, so the raw connect is the one in use", () => {
    assert.equal(typeof rawUnixConnect, 'function');
  });

  it('says who listens and who does not, as net.connect does, for every kind of path', async (t) => {
    const dir = createTempDir('berth-probe-');
    t.after(() => dir.remove());
    await listening(t, dir.join('live.sock'));
    await createStaleSocket(dir.join('stale.sock'));
    writeFileSync(dir.join('file.sock'), 'not a socket');
    mkdirSync(dir.join('dir.sock'));
    const cases = {
      'live.sock': undefined,
      'stale.sock': 'ECONNREFUSED',
      'missing.sock': 'ENOENT',
      'file.sock': 'ECONNREFUSED',
      'dir.sock': 'ECONNREFUSED',
    } as const;
    for (const [name, code] of Object.entries(cases)) {
      const path = dir.join(name);
      const probed = await probeConnect(path);
      assert.equal(probed?.code, code, `${name}: probeConnect`);
      if (code !== undefined) assert.equal(probed?.message, `connect ${code} ${path}`);
      // The net.connect fallback agrees (missing files never reach either: lstat answers first).
      if (code !== 'ENOENT')
        assert.equal((await netProbe(path, undefined))?.code, code, `${name}: net.connect`);
    }
  });

  it('the raw connect reports the errno itself when the file is missing', async (t) => {
    const dir = createTempDir('berth-probe-');
    t.after(() => dir.remove());
    assert.equal(await rawUnixConnect?.(dir.join('none.sock')), 'ENOENT');
  });

  it('a successful probe is one accepted connection that closes at once, with or without a timeout', async (t) => {
    const dir = createTempDir('berth-probe-');
    t.after(() => dir.remove());
    const path = dir.join('live.sock');
    const { server, accepted } = await listening(t, path);
    assert.equal(await probeConnect(path), undefined);
    assert.equal(await probeConnect(path, 1_000), undefined);
    await waitFor('both probes accepted', () => accepted() === 2);
    // Closed by the prober: the server holds no connection from it.
    await waitFor(
      'the probes closed',
      () =>
        new Promise<boolean>((resolve) =>
          server.getConnections((err, count) => resolve(!err && count === 0)),
        ),
    );
  });

  it('many probes at once of a refusing socket all answer, and leave no handle open', async (t) => {
    const dir = createTempDir('berth-probe-');
    t.after(() => dir.remove());
    const path = dir.join('stale.sock');
    await createStaleSocket(path);
    const handlesBefore = process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
    const results = await Promise.all(Array.from({ length: 500 }, () => probeConnect(path)));
    assert.deepEqual(new Set(results.map((r) => r?.code)), new Set(['ECONNREFUSED']));
    await waitFor(
      "the probes' pipe handles closed",
      () => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length <= handlesBefore,
    );
  });
});
