/**
 * Interoperability with grpc-go, the stack nearly every production device
 * plugin runs on (Debian's grpc-go 1.33; test/fixtures/go/device-plugin).
 * A running daemon, a Go device plugin as a real process:
 * - through the legacy kubelet.sock, where berth is the gRPC server and
 *   grpc-go sends the socket path as :authority (Node's HTTP/2 server used
 *   to refuse that with RST_STREAM PROTOCOL_ERROR, before grpc-js saw the
 *   call);
 * - through the plugins directory, where berth is the client and the Go
 *   plugin serves pluginregistration: told registered exactly once.
 * Both times: the inventory on /v1/devices, a health flip, and an Allocate
 * through berth's allocation path (POST /v1/devices/{resource}/allocations).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import { createDaemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import type { DevicePeer } from './fixtures/device-plugin-peer.js';
import { requireGo, spawnGoDevicePlugin } from './fixtures/go-peers.js';

interface Answer {
  status: number;
  json: Record<string, unknown>;
}

function call(socketPath: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> =
      payload === undefined ? {} : { 'content-type': 'application/json' };
    const req = request({ socketPath, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

interface ResourceJson {
  resource: string;
  state: string;
  healthy: number;
  unhealthy: number;
  devices: Array<{ id: string; health: string }>;
}

const longWait = { timeoutMs: 60_000, intervalMs: 25 };

for (const way of ['kubelet.sock', 'plugins-dir'] as const) {
  test(`a grpc-go device plugin registered through ${way === 'kubelet.sock' ? "berth's kubelet.sock" : 'the plugins directory'}: inventory, a health flip, Allocate`, {
    timeout: 600_000,
  }, async (t) => {
    if (!requireGo(t)) return;
    const dir = createTempDir('berth-go-dp-');
    t.after(() => dir.remove());
    const config = resolveDaemonConfig({}, { dataDir: dir.path }, { env: {} });
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const api = config.apiSocketPath;
    const deviceDir = join(dir.path, 'device-plugins');
    const resource = `go.example.com/${way === 'kubelet.sock' ? 'gpu' : 'fpga'}`;

    let plugin: DevicePeer | undefined;
    t.after(() => plugin?.stop());
    plugin = await spawnGoDevicePlugin({
      socketPath: join(deviceDir, 'go-dev.sock'),
      resource,
      ...(way === 'kubelet.sock'
        ? { kubeletSocket: join(deviceDir, 'kubelet.sock') }
        : { registrationSocket: join(dir.path, 'plugins_registry', 'go-dev-reg.sock') }),
      devices: [{ id: 'dev0' }, { id: 'dev1' }, { id: 'dev2' }],
      preferred: true,
    });
    if (way === 'kubelet.sock') {
      const registered = await plugin.next(
        'the Register call to finish',
        (e) => e.event === 'registered' || e.event === 'register-failed',
        60_000,
      );
      assert.equal(registered.event, 'registered', registered.error);
    } else {
      assert.deepEqual(await plugin.next('NotifyRegistrationStatus', (e) => e.event === 'notified', 60_000), {
        event: 'notified',
        registered: true,
        error: '',
      });
    }

    const resourceJson = async () => {
      const res = await call(api, 'GET', '/v1/devices');
      assert.equal(res.status, 200);
      return (res.json.resources as ResourceJson[]).find((r) => r.resource === resource);
    };
    const inventory = await waitFor(
      '3 healthy devices on /v1/devices',
      async () => {
        const r = await resourceJson();
        return r?.healthy === 3 ? r : undefined;
      },
      longWait,
    );
    assert.equal(inventory.state, 'connected');
    assert.deepEqual(
      inventory.devices.map((d) => d.id),
      ['dev0', 'dev1', 'dev2'],
    );

    // dev2 turns unhealthy: berth sees the flip on its ListAndWatch stream.
    plugin.setDevices([{ id: 'dev0' }, { id: 'dev1' }, { id: 'dev2', health: 'Unhealthy' }]);
    await waitFor(
      'dev2 unhealthy on /v1/devices',
      async () => (await resourceJson())?.devices.find((d) => d.id === 'dev2')?.health === 'Unhealthy',
      longWait,
    );

    // Allocate one: the plugin prefers the highest id among the healthy free ones (dev1).
    const allocated = await call(api, 'POST', `/v1/devices/${resource}/allocations`, {
      workload: 'job-1',
      count: 1,
    });
    assert.equal(allocated.status, 201, JSON.stringify(allocated.json));
    assert.deepEqual(await plugin.next('GetPreferredAllocation', (e) => e.event === 'preferred'), {
      event: 'preferred',
      available: ['dev0', 'dev1'],
      size: 1,
    });
    assert.deepEqual(await plugin.next('Allocate', (e) => e.event === 'allocate'), {
      event: 'allocate',
      ids: ['dev1'],
    });
    const allocation = allocated.json.allocation as { deviceIds: string[]; envs: Record<string, string> };
    assert.deepEqual(allocation.deviceIds, ['dev1']);
    assert.deepEqual(allocation.envs, { GO_DEVICES: 'dev1' });

    await plugin.stop();
    if (way === 'plugins-dir') {
      const notified = plugin.seen().filter((e) => e.event === 'notified');
      assert.equal(notified.length, 1, `told ${notified.length} times: ${JSON.stringify(notified)}`);
    }
  });
}
