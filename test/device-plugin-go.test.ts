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
 * Both times: the inventory on /v1/devices, a health flip, an Allocate
 * through berth's allocation path (POST /v1/devices/{resource}/allocations),
 * and the plugin as a DevicePlugin instance in the registry (/v1/plugins and
 * registry events, saying how it came in), gone once the plugin is.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { type RegistryEvent, silentLogger } from '../src/common/index.js';
import type { PluginView } from '../src/daemon/contract.js';
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
    const registryEvents: RegistryEvent[] = [];
    const watching = new AbortController();
    t.after(() => watching.abort());
    void (async () => {
      for await (const event of daemon.registry.subscribe('DevicePlugin', { signal: watching.signal })) {
        registryEvents.push(event);
      }
    })();
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

    // The registry: one DevicePlugin instance, the same shape either way, saying how it came in.
    const pluginPath = `/v1/plugins/DevicePlugin/${encodeURIComponent(resource)}`;
    const detail = await call(api, 'GET', pluginPath);
    assert.equal(detail.status, 200, JSON.stringify(detail.json));
    const instances = detail.json.instances as PluginView[];
    assert.equal(instances.length, 1);
    const endpoint = join(deviceDir, 'go-dev.sock');
    assert.deepEqual(
      {
        name: instances[0]?.name,
        endpoint: instances[0]?.endpoint,
        versions: instances[0]?.versions,
        source: instances[0]?.source,
        socketPath: instances[0]?.socketPath,
      },
      {
        name: resource,
        endpoint,
        versions: ['v1beta1'],
        source: way,
        socketPath: way === 'kubelet.sock' ? endpoint : join(dir.path, 'plugins_registry', 'go-dev-reg.sock'),
      },
    );
    const listed = await call(api, 'GET', '/v1/plugins?type=DevicePlugin');
    assert.deepEqual(
      (listed.json.plugins as PluginView[]).map((p) => [p.name, p.source]),
      [[resource, way]],
    );
    await waitFor('the registered event', () =>
      registryEvents.some((e) => e.type === 'registered' && e.plugin.name === resource),
    );

    await plugin.stop();
    // Its endpoint is gone, so its instance leaves the registry (either way in).
    await waitFor(
      'the instance to leave /v1/plugins',
      async () => (await call(api, 'GET', pluginPath)).status === 404,
      longWait,
    );
    await waitFor('the deregistered event', () =>
      registryEvents.some((e) => e.type === 'deregistered' && e.plugin.name === resource),
    );
    if (way === 'plugins-dir') {
      const notified = plugin.seen().filter((e) => e.event === 'notified');
      assert.equal(notified.length, 1, `told ${notified.length} times: ${JSON.stringify(notified)}`);
    }
  });
}
