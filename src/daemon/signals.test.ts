import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { silentLogger } from '../common/index.js';
import { FakeClock } from '../testing/index.js';
import { handleShutdownSignals } from './signals.js';

function setup(stop: () => Promise<void>) {
  const emitter = new EventEmitter();
  const clock = new FakeClock();
  const exits: number[] = [];
  const dispose = handleShutdownSignals({
    stop,
    timeoutMs: 10_000,
    exit: (code) => exits.push(code),
    clock,
    logger: silentLogger,
    emitter: emitter as unknown as NodeJS.Process,
  });
  return { emitter, clock, exits, dispose };
}

describe('shutdown signals', () => {
  it('stops gracefully and exits 0', async () => {
    let stops = 0;
    const { emitter, exits } = setup(async () => {
      stops += 1;
    });
    emitter.emit('SIGTERM', 'SIGTERM');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stops, 1);
    assert.deepEqual(exits, [0]);
  });

  it('exits 1 when the stop outlives the deadline', async () => {
    const { emitter, clock, exits } = setup(() => new Promise(() => {}));
    emitter.emit('SIGINT', 'SIGINT');
    await clock.advance(9_999);
    assert.deepEqual(exits, []);
    await clock.advance(1);
    assert.deepEqual(exits, [1]);
  });

  it('exits 1 at once on a second signal', () => {
    const { emitter, exits } = setup(() => new Promise(() => {}));
    emitter.emit('SIGINT', 'SIGINT');
    emitter.emit('SIGTERM', 'SIGTERM');
    assert.deepEqual(exits, [1]);
  });

  it('removes its handlers when disposed', () => {
    const { emitter, dispose } = setup(async () => {});
    assert.equal(emitter.listenerCount('SIGTERM'), 1);
    dispose();
    assert.equal(emitter.listenerCount('SIGTERM'), 0);
  });
});
