import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ClockTimer, nextBackoffMs } from '../common/index.js';
import { FakeClock, nodePlugin } from '../testing/index.js';
import { createRegistry, REGISTRY_DEFAULTS } from './index.js';

/** A fake clock that remembers every delay it was asked for. */
class RecordingClock extends FakeClock {
  readonly delays: number[] = [];
  override setTimeout(callback: () => void, ms: number): ClockTimer {
    this.delays.push(ms);
    return super.setTimeout(callback, ms);
  }
}

describe('registry: waitForPlugin', () => {
  it('returns at once when the plugin is current', async () => {
    const clock = new RecordingClock();
    const registry = createRegistry({ clock });
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(1));
    const found = await registry.waitForPlugin('csi-node', 'my-plugin');
    assert.equal(found.allocId, 'alloc-1', 'the newest instance');
    assert.deepEqual(clock.delays, [], 'no timer was needed');
  });

  it('wakes on the registration itself, without waiting for a poll', async () => {
    const clock = new FakeClock();
    const registry = createRegistry({ clock });
    const waiting = registry.waitForPlugin('csi-node', 'my-plugin');
    await clock.waitForTimers(1);
    await registry.registerPlugin(nodePlugin(3));
    assert.equal((await waiting).allocId, 'alloc-3');
    assert.equal(clock.pendingTimers, 0, 'its poll timer was cleared');
  });

  it('ignores other names and types until its own plugin comes', async () => {
    const clock = new FakeClock();
    const registry = createRegistry({ clock });
    let settled = false;
    const waiting = registry.waitForPlugin('csi-node', 'my-plugin').finally(() => {
      settled = true;
    });
    await registry.registerPlugin(nodePlugin(0, { name: 'other' }));
    await registry.registerPlugin(nodePlugin(0, { type: 'csi-controller' }));
    await clock.advance(60_000);
    assert.equal(settled, false);
    await registry.registerPlugin(nodePlugin(0));
    assert.equal((await waiting).name, 'my-plugin');
  });

  it('keeps a safety-net poll: 200 ms doubling to a 5 s cap', async () => {
    assert.deepEqual(
      [200, 400, 800, 1600, 3200, 5000].map((ms) => nextBackoffMs(REGISTRY_DEFAULTS.waitPoll, ms)),
      [400, 800, 1600, 3200, 5000, 5000],
    );
    const clock = new RecordingClock();
    const registry = createRegistry({ clock });
    const controller = new AbortController();
    const waiting = registry.waitForPlugin('csi-node', 'my-plugin', { signal: controller.signal });
    await clock.advance(200 + 400 + 800 + 1600 + 3200 + 5000 + 5000);
    assert.deepEqual(clock.delays, [200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    controller.abort();
    await assert.rejects(waiting, { code: 'BERTH_ABORTED' });
    assert.equal(clock.pendingTimers, 0);
  });

  it('with a deadline: fails when nothing comes, succeeds when the plugin registers in time', async () => {
    const clock = new FakeClock();
    const registry = createRegistry({ clock });
    const deadline = (ms: number) => {
      const controller = new AbortController();
      clock.setTimeout(() => controller.abort(new Error('deadline exceeded')), ms);
      return controller.signal;
    };
    const tooShort = registry.waitForPlugin('bad-type', 'bad-name', { signal: deadline(100) });
    const rejected = assert.rejects(tooShort, {
      code: 'BERTH_ABORTED',
      message: /bad-name of type bad-type: aborted/,
    });
    await clock.advance(100);
    await rejected;

    const inTime = registry.waitForPlugin('csi-node', 'my-plugin', { signal: deadline(500) });
    clock.setTimeout(() => registry.registerPlugin(nodePlugin(0)), 100);
    await clock.advance(100);
    assert.equal((await inTime).allocId, 'alloc-0');
  });

  it('rejects at once for an aborted signal, and pending waits on shutdown', async () => {
    const clock = new FakeClock();
    const registry = createRegistry({ clock });
    await assert.rejects(registry.waitForPlugin('csi-node', 'x', { signal: AbortSignal.abort() }), {
      code: 'BERTH_ABORTED',
    });
    const pending = registry.waitForPlugin('csi-node', 'my-plugin');
    await registry.stop();
    await assert.rejects(pending, { code: 'BERTH_SHUT_DOWN' });
    await assert.rejects(registry.waitForPlugin('csi-node', 'my-plugin'), { code: 'BERTH_SHUT_DOWN' });
    assert.equal(clock.pendingTimers, 0);
  });
});
