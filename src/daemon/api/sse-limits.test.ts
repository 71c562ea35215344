/**
 * Event streams under load: each event is turned into text once whatever the
 * number of clients, and a client that stops reading is cut off with a
 * `lagged` event once its unread bytes pass the bound. Real HTTP over a unix
 * socket; a fake clock only for the heartbeat and the cut-off grace.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { PluginEvent } from '../../common/index.js';
import { createTempDir, FakeClock, waitFor } from '../../testing/index.js';
import { EventBus } from '../event-bus.js';
import { formattedCount, streamSse } from './sse.js';
import { eventView } from './views.js';

function serve(bus: EventBus, clock: FakeClock, path: string, maxBufferedBytes: number): Promise<Server> {
  const server = createServer((_req, res) => {
    const gone = new AbortController();
    const events = bus.subscribe(undefined, { queueSize: 100_000, signal: gone.signal });
    const subscription = {
      [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](),
      close: () => gone.abort(),
    };
    void streamSse(res, subscription, {
      clock,
      heartbeatMs: 60_000,
      greeting: 'berth events',
      view: eventView,
      maxBufferedBytes,
    });
  });
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

function client(path: string): { socket: Socket; text: () => string; ended: () => boolean } {
  const socket = connect(path);
  let text = '';
  let ended = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('end', () => (ended = true));
  socket.write('GET /v1/events HTTP/1.1\r\nhost: localhost\r\n\r\n');
  return { socket, text: () => text, ended: () => ended };
}

function failed(i: number, padding: string): PluginEvent {
  return {
    type: 'failed',
    at: i,
    socketPath: `/p/${i}.sock`,
    error: { code: 'BERTH_DIAL_FAILED', message: padding },
    retryAt: null,
    attempts: 1,
  };
}

describe('event stream limits', () => {
  it('serialises each event once for 50 clients', async (t) => {
    await using dir = createTempDir('berth-sse-');
    const clock = new FakeClock();
    const bus = new EventBus({ clock });
    const server = await serve(bus, clock, dir.join('api.sock'), 1024 * 1024);
    const clients = Array.from({ length: 50 }, () => client(dir.join('api.sock')));
    t.after(() => {
      for (const c of clients) c.socket.destroy();
      void bus.stop();
      server.close();
    });
    await waitFor('50 subscribers', () => bus.subscriberCount === 50);
    const before = formattedCount();
    bus.publish(failed(1, 'once'));
    await waitFor('every client to receive it', () => clients.every((c) => c.text().includes('"once"')));
    assert.equal(formattedCount() - before, 1);
  });

  it('cuts a client that stops reading off with a lagged event once its unread bytes pass the bound', async (t) => {
    await using dir = createTempDir('berth-sse-');
    const clock = new FakeClock();
    const bus = new EventBus({ clock });
    const server = await serve(bus, clock, dir.join('api.sock'), 64 * 1024);
    const slow = client(dir.join('api.sock'));
    const fast = client(dir.join('api.sock'));
    t.after(() => {
      slow.socket.destroy();
      fast.socket.destroy();
      void bus.stop();
      server.close();
    });
    await waitFor(
      'two subscribers',
      () => bus.subscriberCount === 2 && slow.text().includes(': berth events'),
    );
    slow.socket.pause();
    const padding = 'x'.repeat(1024);
    // Small bursts (the reading client keeps up), until the slow one has more than the
    // kernel's socket buffers and the 64 KiB bound unread.
    for (let i = 0; i < 20_000 && bus.subscriberCount === 2; i += 1) {
      bus.publish(failed(i, padding));
      if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await waitFor('the slow client to be cut off', () => bus.subscriberCount === 1);
    slow.socket.resume();
    await waitFor('the slow stream to end', () => slow.ended());
    // The last event before the end of the (chunked) response is the lagged notice.
    const events = [...slow.text().matchAll(/event: (\w[\w-]*)\n/g)].map((m) => m[1]);
    assert.equal(events.at(-1), 'lagged');
    assert.ok(events.length > 1);
    assert.match(slow.text(), /event: lagged\ndata: \{"type":"lagged","at":"[^"]+","dropped":1\}/);
    // The reader that kept up was not disturbed.
    bus.publish(failed(-1, 'still here'));
    await waitFor('the fast client to keep receiving', () => fast.text().includes('"still here"'));
  });
});
