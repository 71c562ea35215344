import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginEvent } from '../common/index.js';
import { createRecordingLogger } from '../testing/harness/index.js';
import { FakeClock } from '../testing/index.js';
import { createEventLog, SNAPSHOT_INFO_EVERY_MS } from './event-log.js';

const snapshot = (resource: string, changed: string[]): PluginEvent => ({
  type: 'devices-changed',
  at: 0,
  resource,
  reason: 'snapshot',
  healthy: 4096,
  unhealthy: 0,
  changed,
});

describe('event log: device snapshots (issue 17)', () => {
  it('a resource flapping every 20 ms writes one info line per 10 s, the rest at debug, and the next line counts them', async () => {
    const clock = new FakeClock();
    const logger = createRecordingLogger();
    const log = createEventLog(logger, clock);
    const ids = Array.from({ length: 100 }, (_, i) => `dev-${String(i).padStart(4, '0')}`);
    // 10 s of snapshots every 20 ms: 500 of them.
    for (let i = 0; i < SNAPSHOT_INFO_EVERY_MS / 20; i++) {
      log(snapshot('example.com/dev', ids));
      await clock.advance(20);
    }
    log(snapshot('other.com/dev', ['x']));
    log(snapshot('example.com/dev', ids));
    const info = logger.records.filter((r) => r.level === 'info');
    assert.equal(info.length, 3, 'the first line, the other resource, and the line after 10 s');
    assert.deepEqual(info[0]?.fields.changed, ids.slice(0, 8), 'an info line names at most 8 devices');
    assert.equal(info[0]?.fields.changedCount, 100);
    assert.equal(info[2]?.fields.foldedSnapshots, 499);
    assert.match(info[2]?.message ?? '', /499 more changed snapshots since the last line, logged at debug/);
    assert.equal(logger.records.filter((r) => r.level === 'debug').length, 499);
  });
});
