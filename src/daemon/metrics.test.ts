import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '../testing/index.js';
import { createDaemonMetrics, EVENT_LOOP_SAMPLE_MS } from './metrics.js';

describe('daemon metrics (metrics.ts)', () => {
  it("samples the event loop every EVENT_LOOP_SAMPLE_MS, not prom-client's 10 ms (an idle daemon's wakeups)", async () => {
    const { registry } = createDaemonMetrics({ sseClients: () => 0, version: 'test' });
    // The lag gauges report the monitor's intervals: about EVENT_LOOP_SAMPLE_MS on a quiet loop, or
    // 10 ms at prom-client's default. A monitor with no interval yet reads a few hundred ns.
    const p50 = await waitFor(
      'an event-loop lag sample',
      async () => {
        const text = await registry.metrics();
        const line = text.split('\n').find((l) => l.startsWith('berth_nodejs_eventloop_lag_p50_seconds '));
        const value = Number(line?.split(' ')[1]);
        return value > 0.001 ? value : undefined;
      },
      { intervalMs: EVENT_LOOP_SAMPLE_MS * 3, timeoutMs: 10_000 },
    );
    assert.ok(
      p50 >= (EVENT_LOOP_SAMPLE_MS / 1000) * 0.9,
      `p50 ${p50} s, sampled every ${EVENT_LOOP_SAMPLE_MS} ms`,
    );
    registry.clear();
  });
});
