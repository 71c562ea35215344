/**
 * PluginManager.subscribe is a stream like every other subscribe: it carries
 * the events onEvent gets, in order, and ends when its signal aborts, when
 * the consumer breaks out of its loop, or when the manager stops. Real
 * plugins on real unix sockets.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { createExamplePlugin } from '../registration/index.js';
import { createTempDir, nextWithin, RecordingHandler } from '../testing/index.js';
import { createPluginManager } from './index.js';
import type { PluginManagerEvent } from './types.js';

async function started(t: TestContext) {
  const dir = createTempDir();
  const pluginsDir = dir.join('plugins');
  const seen: PluginManagerEvent[] = [];
  const manager = createPluginManager({ pluginsDir, liveness: false, onEvent: (event) => seen.push(event) });
  manager.addHandler('DevicePlugin', new RecordingHandler());
  t.after(async () => {
    await manager.stop();
    dir.remove();
  });
  await manager.start();
  const startPlugin = async (name: string) => {
    const plugin = createExamplePlugin({
      socketPath: join(pluginsDir, `${name}.sock`),
      name,
      type: 'DevicePlugin',
      versions: ['v1beta1'],
    });
    t.after(() => plugin.stop());
    await plugin.start();
    return plugin;
  };
  return { manager, seen, startPlugin };
}

describe('plugin manager subscribe', () => {
  it('streams what onEvent gets, in the same order, and ends when the consumer breaks out', async (t) => {
    const { manager, seen, startPlugin } = await started(t);
    const streamed: PluginManagerEvent[] = [];
    const consumed = (async () => {
      for await (const event of manager.subscribe()) {
        streamed.push(event);
        if (event.type === 'plugin-registered') break;
      }
    })();
    const plugin = await startPlugin('one');
    await consumed;
    assert.deepEqual(
      streamed.map((e) => [e.type, e.socketPath]),
      [
        ['discovered', plugin.socketPath],
        ['plugin-registered', plugin.socketPath],
      ],
    );
    assert.deepEqual(streamed, seen.slice(0, 2), 'the stream and onEvent carry the same events');
    const registered = streamed[1];
    assert.ok(registered?.type === 'plugin-registered');
    assert.equal(registered.plugin.name, 'one');
  });

  it('ends when its signal aborts, and at once for a signal aborted already', async (t) => {
    const { manager, startPlugin } = await started(t);
    const abort = new AbortController();
    const iterator = manager.subscribe({ signal: abort.signal })[Symbol.asyncIterator]();
    const plugin = await startPlugin('two');
    const first = await nextWithin(iterator, 'the discovered event');
    assert.deepEqual([first.type, first.socketPath], ['discovered', plugin.socketPath]);
    abort.abort();
    await endsWithin(iterator, 'the stream to end after its signal aborted');
    const late = manager.subscribe({ signal: AbortSignal.abort() })[Symbol.asyncIterator]();
    assert.deepEqual(await endsWithin(late, 'an already-aborted stream to end'), []);
  });

  it('ends every stream when the manager stops, and a stream opened after stop is empty', async (t) => {
    const { manager } = await started(t);
    const iterator = manager.subscribe()[Symbol.asyncIterator]();
    const next = iterator.next();
    await manager.stop();
    assert.equal((await next).done, true);
    const after = manager.subscribe()[Symbol.asyncIterator]();
    assert.deepEqual(await endsWithin(after, 'a stream opened after stop to end'), []);
  });
});

/** Reads a stream to its end (what was queued before the end is still delivered); fails after 10 s. */
async function endsWithin<T>(iterator: AsyncIterator<T>, what: string): Promise<T[]> {
  const rest: T[] = [];
  const deadline = AbortSignal.timeout(10_000);
  const timedOut = new Promise<never>((_, reject) => {
    deadline.addEventListener('abort', () => reject(new Error(`timed out waiting for ${what}`)), {
      once: true,
    });
  });
  timedOut.catch(() => {});
  while (true) {
    const result = await Promise.race([iterator.next(), timedOut]);
    if (result.done === true) return rest;
    rest.push(result.value);
  }
}
