import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRecordingLogger } from '../testing/harness/index.js';
import { FakeClock } from '../testing/index.js';
import { type StoppableChild, stopInReverse } from './stop-in-reverse.js';

function child(name: string, log: string[], stop: () => Promise<void> | void = () => {}): StoppableChild {
  return {
    name,
    stop: () => {
      log.push(name);
      return stop();
    },
  };
}

describe('stopInReverse', () => {
  it('stops children newest first, one at a time', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    let releaseSecond: () => void = () => {};
    const second = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    const stopping = stopInReverse(
      [child('first', log), child('second', log, () => second), child('third', log)],
      { clock, logger: createRecordingLogger(), deadline: 10_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(log, ['third', 'second'], 'first waits until second has stopped');
    releaseSecond();
    assert.deepEqual(await stopping, { failed: [], overran: [] });
    assert.deepEqual(log, ['third', 'second', 'first']);
  });

  it('a failing child is logged with { err } and the rest still stop', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    const logger = createRecordingLogger();
    const { records } = logger;
    const report = await stopInReverse(
      [
        child('storage', log),
        child('broken', log, () => {
          throw new Error('boom');
        }),
        child('api', log, async () => {
          throw new Error('async boom');
        }),
      ],
      { clock, logger, deadline: 10_000 },
    );
    assert.deepEqual(log, ['api', 'broken', 'storage']);
    assert.deepEqual(report.failed, ['api', 'broken']);
    const warned = records.filter((r) => r.level === 'warn');
    assert.equal(warned.length, 2);
    assert.ok(warned.every((r) => r.fields.err instanceof Error));
  });

  it('does not wait past the deadline for a child that hangs', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    const logger = createRecordingLogger();
    const { records } = logger;
    const stopping = stopInReverse(
      [child('storage', log), child('stuck', log, () => new Promise<void>(() => {}))],
      { clock, logger, deadline: 5_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(log, ['stuck'], 'the deadline has not passed: still waiting');
    await clock.advance(5_000);
    const report = await stopping;
    assert.deepEqual(report, { failed: [], overran: ['stuck'] });
    assert.deepEqual(log, ['stuck', 'storage'], 'the older child is stopped even so');
    assert.ok(
      records.some(
        (r) => r.level === 'warn' && /stuck did not stop before the shutdown deadline/.test(r.message),
      ),
    );
  });
});
