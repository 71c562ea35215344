import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCsiDrivers } from './csi.js';

test('berth csi drivers prints one row per driver with its node facts', () => {
  assert.equal(formatCsiDrivers([]), 'no CSI drivers registered');
  const text = formatCsiDrivers([
    {
      name: 'csi.example.com',
      nodeId: 'node-1',
      maxVolumesPerNode: 16,
      topologyKeys: ['rack', 'zone'],
      accessibleTopology: { zone: 'a', rack: 'r1' },
      vendorVersion: '1.2.3',
      capabilities: ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS'],
      ready: true,
      version: '1.0.0',
      endpoint: '/e',
      socketPath: '/s',
      registeredAt: null,
      warnings: [],
    },
    {
      name: 'plain.example.com',
      nodeId: 'node-1',
      maxVolumesPerNode: null,
      topologyKeys: [],
      accessibleTopology: null,
      vendorVersion: null,
      capabilities: null,
      ready: null,
      version: '1.0.0',
      endpoint: '/e2',
      socketPath: '/s2',
      registeredAt: null,
      warnings: ['GetPluginInfo: rpc error: code = Unimplemented desc = no'],
    },
  ]);
  const [header, first, second] = text.split('\n');
  assert.match(
    header ?? '',
    /^DRIVER\s+NODE ID\s+MAX VOLUMES\s+TOPOLOGY\s+VENDOR VERSION\s+CAPABILITIES\s+READY$/,
  );
  assert.match(
    first ?? '',
    /^csi\.example\.com\s+node-1\s+16\s+rack=r1,zone=a\s+1\.2\.3\s+STAGE_UNSTAGE_VOLUME,GET_VOLUME_STATS\s+yes$/,
  );
  assert.match(second ?? '', /^plain\.example\.com\s+node-1\s+-\s+-\s+-\s+\?\s+\?$/);
});

test('berth dra drivers prints one row per instance and marks the chosen one', async () => {
  const { formatDraDrivers } = await import('./dra.js');
  assert.equal(formatDraDrivers([]), 'no DRA drivers registered');
  const text = formatDraDrivers([
    {
      name: 'gpu.example.com',
      usable: true,
      chosen: { endpoint: '/b.sock', service: 'v1.DRAPlugin' },
      unusableSince: null,
      instances: [
        {
          endpoint: '/b.sock',
          socketPath: '/r/b',
          service: 'v1.DRAPlugin',
          state: 'ready',
          connected: true,
          registeredAt: null,
        },
        {
          endpoint: '/a.sock',
          socketPath: '/r/a',
          service: 'v1beta1.DRAPlugin',
          state: 'idle',
          connected: false,
          registeredAt: null,
        },
      ],
    },
  ]);
  const [header, b, a] = text.split('\n');
  assert.match(header ?? '', /^DRIVER\s+USABLE\s+INSTANCE\s+SERVICE\s+STATE$/);
  assert.match(b ?? '', /^gpu\.example\.com\s+yes\s+\*\/b\.sock\s+v1\.DRAPlugin\s+ready$/);
  assert.match(a ?? '', /^gpu\.example\.com\s+yes\s+\/a\.sock\s+v1beta1\.DRAPlugin\s+idle$/);
});
