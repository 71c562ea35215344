/**
 * The /v1/devices routes over a real device plugin manager and a real device
 * plugin: resource names with a slash in the path (as is, percent-encoded, or
 * as ?resource=), allocation and release, and the error statuses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { silentLogger, systemClock } from '../../../common/index.js';
import {
  createDevicePluginManager,
  type DevicePluginManager,
} from '../../../handlers/device-plugin/index.js';
import { type DevicePluginStub, startDevicePluginStub } from '../../../testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../../../testing/index.js';
import { EventBus } from '../../event-bus.js';
import { type ApiApp, createApiApp } from '../api-server.js';
import type { ApiBackend } from '../api-types.js';

const GPU = 'example.com/gpu';

describe('device routes', () => {
  let dir: TempDir;
  let manager: DevicePluginManager;
  let stub: DevicePluginStub;
  let api: ApiApp;

  before(async () => {
    dir = createTempDir('berth-dr-');
    manager = createDevicePluginManager({ databasePath: dir.join('devices.db') });
    await manager.start();
    stub = await startDevicePluginStub({
      socketPath: dir.join('gpu.sock'),
      devices: [{ id: 'g0', numaNodes: [0] }, { id: 'g1' }, { id: 'g2' }, { id: 'g3', health: 'Unhealthy' }],
    });
    await manager.connect(GPU, stub.socketPath, { via: 'kubelet-socket' });
    await waitFor('the devices', () => manager.get(GPU)?.devices.length === 4);
    const metrics = new Registry();
    const backend: ApiBackend = {
      plugins: { types: () => [], listPlugins: () => undefined, listInstances: () => [] },
      sockets: () => [],
      events: new EventBus({ clock: systemClock }),
      pods: { apply: () => assert.fail('unused'), delete: async () => undefined, list: () => [] },
      objects: { get: () => assert.fail('unused') },
      metrics: { contentType: metrics.contentType, render: () => metrics.metrics() },
      status: () => ({}) as ReturnType<ApiBackend['status']>,
      readiness: () => ({ ready: true, checks: [] }),
      devices: manager,
    };
    api = await createApiApp(backend, {
      clock: systemClock,
      logger: silentLogger,
      bodyLimitBytes: 4096,
      sseQueueSize: 16,
      sseHeartbeatMs: 60_000,
    });
  });
  after(async () => {
    await api.app.close();
    await manager.stop();
    await stub.stop();
    dir.remove();
  });

  const post = (url: string, payload: unknown) =>
    api.app.inject({ method: 'POST', url, payload: payload as object });

  it('lists resources with counts, devices, topology and ISO times', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/v1/devices' });
    assert.equal(res.statusCode, 200);
    const [gpu] = res.json().resources;
    assert.equal(gpu.resource, GPU);
    assert.equal(gpu.state, 'connected');
    assert.deepEqual([gpu.healthy, gpu.unhealthy], [3, 1]);
    assert.deepEqual(gpu.topology[0], { numaNode: 0, deviceIds: ['g0'] });
    assert.match(gpu.connectedAt, /^\d{4}-\d\d-\d\dT/);
    const one = await api.app.inject({ method: 'GET', url: `/v1/devices/${GPU}` });
    assert.equal(one.json().resource.resource, GPU);
    const missing = await api.app.inject({ method: 'GET', url: '/v1/devices/example.com/none' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'BERTH_NOT_FOUND');
  });

  it('allocates with the slash as is, percent-encoded, or as ?resource=, and releases', async () => {
    const plain = await post(`/v1/devices/${GPU}/allocations`, { workload: 'w1', count: 1 });
    assert.equal(plain.statusCode, 201, plain.body);
    assert.deepEqual(plain.json().allocation.deviceIds, ['g0']);
    assert.match(plain.json().allocation.allocatedAt, /^\d{4}-/);
    const encoded = await post('/v1/devices/example.com%2Fgpu/allocations', {
      workload: 'w2',
      deviceIds: ['g2'],
    });
    assert.equal(encoded.statusCode, 201, encoded.body);
    assert.deepEqual(encoded.json().allocation.deviceIds, ['g2']);
    const query = await post(`/v1/devices/allocations?resource=${encodeURIComponent(GPU)}`, {
      workload: 'w3',
      count: 1,
    });
    assert.equal(query.statusCode, 201, query.body);
    assert.deepEqual(query.json().allocation.deviceIds, ['g1']);

    const got = await api.app.inject({ method: 'GET', url: `/v1/devices/${GPU}/allocations/w2` });
    assert.deepEqual(got.json().allocation.envs, { STUB_DEVICES: 'g2' });
    const list = await api.app.inject({ method: 'GET', url: `/v1/devices/${GPU}/allocations` });
    assert.deepEqual(
      list.json().allocations.map((a: { workload: string }) => a.workload),
      ['w1', 'w2', 'w3'],
    );

    for (const url of [
      `/v1/devices/${GPU}/allocations/w1`,
      '/v1/devices/example.com%2Fgpu/allocations/w2',
      `/v1/devices/allocations/w3?resource=${GPU}`,
    ]) {
      const res = await api.app.inject({ method: 'DELETE', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }
    const again = await api.app.inject({ method: 'DELETE', url: `/v1/devices/${GPU}/allocations/w1` });
    assert.equal(again.statusCode, 404);
    assert.equal(again.json().error.code, 'BERTH_ALLOCATION_NOT_FOUND');
  });

  it('answers errors with a code and a fitting status', async () => {
    const tooMany = await post(`/v1/devices/${GPU}/allocations`, { workload: 'big', count: 4 });
    assert.equal(tooMany.statusCode, 409);
    assert.deepEqual(tooMany.json().error, {
      code: 'BERTH_DEVICES_UNAVAILABLE',
      message: 'requested number of devices unavailable for example.com/gpu. Requested: 4, Available: 3',
    });
    const unknown = await post('/v1/devices/example.com/none/allocations', { workload: 'w', count: 1 });
    assert.equal(unknown.statusCode, 409);
    assert.equal(unknown.json().error.message, 'cannot allocate unregistered device example.com/none');
    const bad = await post(`/v1/devices/${GPU}/allocations`, { workload: 'w', count: 'two' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'BERTH_INVALID_ARGUMENT');
    const notObject = await post(`/v1/devices/${GPU}/allocations`, [1]);
    assert.equal(notObject.statusCode, 400);
    const held = await post(`/v1/devices/${GPU}/allocations`, { workload: 'h', count: 1 });
    assert.equal(held.statusCode, 201);
    const twice = await post(`/v1/devices/${GPU}/allocations`, { workload: 'h', count: 1 });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().error.code, 'BERTH_ALLOCATION_EXISTS');
    const wrongRoute = await post(`/v1/devices/${GPU}`, { workload: 'w', count: 1 });
    assert.equal(wrongRoute.statusCode, 404);
    assert.match(wrongRoute.json().error.message, /use \/v1\/devices\/\{resource\}\/allocations/);
  });
});
