import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createTempDir } from '../testing/index.js';
import { ApiClient, parseSseBlock } from './api-client.js';
import { resolveApiTarget } from './api-target.js';

describe('API client', () => {
  it('chooses the daemon from --api or --data-dir', async () => {
    // A TCP target reads the default data dir's api-token: point it at an empty one, never the real
    // one (a daemon started by `npm start` has a token there).
    await using dir = createTempDir();
    assert.deepEqual(resolveApiTarget({ api: '127.0.0.1:7878' }, { BERTH_DATA_DIR: dir.path }), {
      tcp: { host: '127.0.0.1', port: 7878 },
    });
    assert.deepEqual(resolveApiTarget({ api: '/run/berth.sock' }), { socketPath: '/run/berth.sock' });
    assert.deepEqual(resolveApiTarget({ dataDir: '/d' }), { socketPath: '/d/berth.sock' });
    assert.deepEqual(resolveApiTarget({}, { BERTH_DATA_DIR: '/env' }), { socketPath: '/env/berth.sock' });
    assert.deepEqual(resolveApiTarget({}, { BERTH_DATA_DIR: '/env' }, 0), { socketPath: '/env/berth.sock' });
  });

  it('finds the daemon with no flags where berth run puts it: /run/berth as root, the XDG state dir otherwise', () => {
    assert.deepEqual(resolveApiTarget({}, { HOME: '/h' }, 0), { socketPath: '/run/berth/berth.sock' });
    assert.deepEqual(resolveApiTarget({}, { XDG_STATE_HOME: '/x' }, 1000), {
      socketPath: '/x/berth/berth.sock',
    });
    assert.deepEqual(resolveApiTarget({ dataDir: '/d' }, {}, 0), { socketPath: '/d/berth.sock' });
  });

  it('parses server-sent event blocks, skipping comments', () => {
    assert.deepEqual(parseSseBlock('event: registered\ndata: {"a":1}'), {
      event: 'registered',
      data: '{"a":1}',
    });
    assert.deepEqual(parseSseBlock('data: x\ndata: y'), { event: 'message', data: 'x\ny' });
    assert.equal(parseSseBlock(': heartbeat'), undefined);
  });

  it('returns JSON, passes the daemon error on, and follows an event stream', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const socketPath = dir.join('api.sock');
    const server = createServer((req, res) => {
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
      } else if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': hi\n\nevent: registered\ndata: {"n":1}\n\nevent: dereg');
        res.end('istered\ndata: {"n":2}\n\n');
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"BERTH_PLUGIN_NOT_FOUND","message":"plugin x for type y not found"}}');
      }
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = new ApiClient({ socketPath });

    assert.deepEqual(await client.request('GET', '/ok'), { hello: 'world' });
    await assert.rejects(
      client.request('GET', '/missing'),
      (err) =>
        isBerthError(err, 'BERTH_API_ERROR') &&
        err.message === 'plugin x for type y not found' &&
        err.details.code === 'BERTH_PLUGIN_NOT_FOUND' &&
        err.details.status === 404,
    );
    const events = [];
    for await (const message of client.events('/events')) events.push(message);
    assert.deepEqual(events, [
      { event: 'registered', data: '{"n":1}' },
      { event: 'deregistered', data: '{"n":2}' },
    ]);
  });

  it('says the daemon is unreachable and how to start it', async () => {
    const client = new ApiClient({ tcp: { host: '127.0.0.1', port: 1 } });
    await assert.rejects(
      client.request('GET', '/v1/plugins'),
      (err) =>
        isBerthError(err, 'BERTH_API_UNREACHABLE') &&
        err.message ===
          'cannot reach the daemon at http://127.0.0.1:1: connection refused (is `berth run` running?)',
    );
  });
});
