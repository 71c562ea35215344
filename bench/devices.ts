/**
 * Device plugins: (1) how long a ListAndWatch snapshot takes from the
 * plugin's write to berth's devices-changed event, for 8 devices (baseline)
 * and for 4096 (the largest snapshot berth accepts); (2) allocate + release
 * through a real plugin (Allocate RPC) with the allocations file in memory
 * (baseline) and on disk with synchronous=FULL (what the daemon runs).
 */
import type { PluginEvent } from '../src/common/index.js';
import { createDevicePluginManager, type DevicePluginManager } from '../src/handlers/device-plugin/index.js';
import { type DevicePluginStub, startDevicePluginStub } from '../src/testing/harness/index.js';
import { type BenchSection, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { interleave, makeTempDir, nowMs } from './lib/timing.js';

const ROUNDS = 30;
const SNAPSHOTS_PER_ROUND = 5;
const ALLOCATIONS_PER_ROUND = 10;

interface SnapshotCase {
  name: string;
  size: number;
  stub: DevicePluginStub;
  manager: DevicePluginManager;
  resource: string;
  waiters: Array<() => void>;
  samples: number[];
  flip: boolean;
}

export async function devicesBenchmark(): Promise<BenchSection> {
  const dir = makeTempDir('berth-bench-dev-');
  const managers: DevicePluginManager[] = [];
  const stubs: DevicePluginStub[] = [];
  try {
    const newManager = async (databasePath: string, onEvent?: (e: PluginEvent) => void) => {
      const manager = createDevicePluginManager({ databasePath, ...(onEvent ? { onEvent } : {}) });
      managers.push(manager);
      await manager.start();
      return manager;
    };
    const devices = (n: number, unhealthy: boolean) =>
      Array.from({ length: n }, (_, i) => ({
        id: `dev-${i}`,
        health: unhealthy && i === 0 ? 'Unhealthy' : 'Healthy',
      }));

    const snapshotCase = async (name: string, size: number): Promise<SnapshotCase> => {
      const c = {
        name,
        size,
        resource: `bench.example.com/s${size}`,
        waiters: [],
        samples: [],
        flip: false,
      } as unknown as SnapshotCase;
      c.manager = await newManager(`${dir.path}/snap-${size}.db`, (event) => {
        if (event.type === 'devices-changed' && event.reason === 'snapshot')
          for (const w of c.waiters.splice(0)) w();
      });
      c.stub = await startDevicePluginStub({
        socketPath: `${dir.path}/s${size}.sock`,
        devices: devices(size, false),
      });
      stubs.push(c.stub);
      await c.manager.connect(c.resource, c.stub.socketPath, { via: 'kubelet-socket' });
      while (c.manager.get(c.resource)?.devices.length !== size) await new Promise((r) => setTimeout(r, 5));
      return c;
    };
    const snapshotOnce = async (c: SnapshotCase, record: boolean) => {
      c.flip = !c.flip;
      const seen = new Promise<void>((resolve) => c.waiters.push(resolve));
      const t0 = nowMs();
      c.stub.setDevices(devices(c.size, c.flip));
      await seen;
      if (record) c.samples.push(nowMs() - t0);
    };
    const small = await snapshotCase('8 devices (baseline)', 8);
    const large = await snapshotCase('4096 devices', 4096);
    for (let i = 0; i < 5; i++) for (const c of [small, large]) await snapshotOnce(c, false);
    await interleave(
      ROUNDS,
      [small, large].map((c) => async () => {
        for (let i = 0; i < SNAPSHOTS_PER_ROUND; i++) await snapshotOnce(c, true);
      }),
    );

    const allocCase = async (name: string, databasePath: string) => {
      const manager = await newManager(databasePath);
      const stub = await startDevicePluginStub({
        socketPath: `${dir.path}/a-${managers.length}.sock`,
        devices: devices(8, false),
      });
      stubs.push(stub);
      const resource = 'bench.example.com/gpu';
      await manager.connect(resource, stub.socketPath, { via: 'kubelet-socket' });
      while (manager.get(resource)?.healthy !== 8) await new Promise((r) => setTimeout(r, 5));
      return { name, manager, resource, samples: [] as number[], n: 0 };
    };
    const memory = await allocCase('allocate+release, allocations in memory (baseline)', ':memory:');
    const disk = await allocCase(
      'allocate+release, devices.db on disk (WAL, synchronous=FULL)',
      `${dir.path}/devices.db`,
    );
    const allocOnce = async (c: typeof memory, record: boolean) => {
      const workload = `w${c.n++}`;
      const t0 = nowMs();
      await c.manager.allocate(c.resource, { workload, count: 2 });
      await c.manager.release(c.resource, workload);
      if (record) c.samples.push(nowMs() - t0);
    };
    for (let i = 0; i < 10; i++) for (const c of [memory, disk]) await allocOnce(c, false);
    await interleave(
      ROUNDS,
      [memory, disk].map((c) => async () => {
        for (let i = 0; i < ALLOCATIONS_PER_ROUND; i++) await allocOnce(c, true);
      }),
    );

    const smallSummary = summarize(small.samples);
    const memorySummary = summarize(memory.samples);
    return {
      title: 'Device plugins: snapshot propagation and allocation',
      method:
        `A TypeScript device plugin on a unix socket; berth's device manager in the same process. Snapshot: ` +
        `time from the plugin writing a ListAndWatch message that flips one device's health to the ` +
        `devices-changed event (${ROUNDS} rounds × ${SNAPSHOTS_PER_ROUND}, interleaved). Allocation: ` +
        `allocate 2 of 8 devices (plugin Allocate RPC, durable record) then release (${ROUNDS} rounds × ` +
        `${ALLOCATIONS_PER_ROUND}, interleaved).`,
      tables: [
        {
          caption: 'ListAndWatch snapshot to devices-changed; baseline: 8 devices',
          columns: LATENCY_COLUMNS,
          rows: [
            latencyRow(small.name, smallSummary),
            latencyRow(large.name, summarize(large.samples), smallSummary),
          ],
        },
        {
          caption: 'allocate + release; baseline: allocations in memory',
          columns: LATENCY_COLUMNS,
          rows: [
            latencyRow(memory.name, memorySummary),
            latencyRow(disk.name, summarize(disk.samples), memorySummary),
          ],
        },
      ],
      notes: [
        'The disk case pays two fsyncs (insert, delete) per allocate+release; that is the price of an allocation surviving a power cut.',
      ],
    };
  } finally {
    for (const manager of managers) await manager.stop();
    for (const stub of stubs) await stub.stop();
    dir.remove();
  }
}
