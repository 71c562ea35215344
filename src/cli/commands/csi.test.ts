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
