import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDevices, type ResourceRow } from './devices.js';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);

test('berth devices prints resources, then devices, then warnings for unhealthy allocated devices', () => {
  const rows: ResourceRow[] = [
    {
      resource: 'vendor.com/gpu',
      state: 'disconnected',
      via: 'plugins-dir',
      options: null,
      topology: [],
      connectedAt: null,
      disconnectedAt: null,
      lastError: null,
      endpoint: '/run/gpu.sock',
      healthy: 0,
      unhealthy: 2,
      removeAt: new Date(now + 5 * 60_000).toISOString(),
      devices: [
        { id: 'gpu0', health: 'Unhealthy', numaNodes: [0], allocatedTo: 'job-1' },
        { id: 'gpu1', health: 'Unhealthy', numaNodes: [], allocatedTo: null },
      ],
      allocations: [
        {
          resource: 'vendor.com/gpu',
          workload: 'job-1',
          deviceIds: ['gpu0'],
          unhealthyDeviceIds: ['gpu0'],
          allocatedAt: null,
          envs: {},
          mounts: [],
          devices: [],
          annotations: {},
          cdiDevices: [],
        },
      ],
    },
    {
      resource: 'vendor.com/nic',
      state: 'absent',
      via: null,
      options: null,
      topology: [],
      connectedAt: null,
      disconnectedAt: null,
      lastError: null,
      endpoint: null,
      healthy: 0,
      unhealthy: 0,
      removeAt: null,
      devices: [],
      allocations: [],
    },
  ];
  const lines = formatDevices(rows, now).split('\n');
  assert.match(lines[0] ?? '', /^RESOURCE\s+STATE\s+HEALTHY\s+UNHEALTHY\s+ALLOCATIONS\s+ENDPOINT$/);
  assert.match(
    lines[1] ?? '',
    /^vendor\.com\/gpu\s+disconnected \(removed in 5m\)\s+0\s+2\s+1\s+\/run\/gpu\.sock$/,
  );
  assert.match(lines[2] ?? '', /^vendor\.com\/nic\s+absent\s+0\s+0\s+0\s+-$/);
  assert.equal(lines[3], '');
  assert.match(lines[4] ?? '', /^RESOURCE\s+DEVICE\s+HEALTH\s+NUMA\s+ALLOCATED TO$/);
  assert.match(lines[5] ?? '', /^vendor\.com\/gpu\s+gpu0\s+Unhealthy\s+0\s+job-1$/);
  assert.match(lines[6] ?? '', /^vendor\.com\/gpu\s+gpu1\s+Unhealthy\s+-\s+-$/);
  assert.equal(lines.at(-1), 'warning: job-1 holds unhealthy vendor.com/gpu devices gpu0');
  assert.equal(formatDevices([], now), 'no device plugin resources');
});
