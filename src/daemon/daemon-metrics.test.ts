/**
 * /metrics and /v1/status of a running daemon with every built-in handler in
 * use: a device plugin (one healthy device allocated, one unhealthy), a CSI
 * driver, a DRA driver (all real sockets and gRPC), the API itself, and the
 * cluster view on a real etcd.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../common/index.js';
import { createExamplePlugin } from '../registration/index.js';
import {
  type EtcdServer,
  startCsiTestDriver,
  startDevicePluginStub,
  startDraTestDriver,
  startEtcdServer,
} from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { resolveDaemonConfig } from './config/config.js';
import { createDaemon } from './daemon.js';
import { berthVersion } from './version.js';

function call(socketPath: string, method: string, path: string, body?: unknown) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> =
      payload === undefined ? {} : { 'content-type': 'application/json' };
    const req = request({ socketPath, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One sample's value from Prometheus text, by its exact name and label set as printed. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

let etcd: EtcdServer;
before(async () => {
  etcd = await startEtcdServer();
});
after(async () => {
  await etcd?.stop();
});

describe('daemon metrics and status', () => {
  it('reports build, devices, CSI, DRA, the cluster lease and API requests with real values', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = resolveDaemonConfig(
      {
        cluster: {
          etcd: { endpoints: [etcd.endpoint] },
          nodeName: 'node-m',
          prefix: `/m-${process.pid}/`,
          leaseTtl: 3,
        },
      },
      { dataDir: dir.path },
      { env: {} },
    );
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const api = config.apiSocketPath;

    const gpu = await startDevicePluginStub({
      socketPath: dir.join('gpu-plugin.sock'),
      devices: [{ id: 'g0' }, { id: 'g1', health: 'Unhealthy' }],
    });
    t.after(() => gpu.stop());
    const csiDriver = await startCsiTestDriver(dir.join('csi-driver.sock'), {
      name: 'csi.example.com',
      nodeId: 'node-m',
    });
    t.after(() => csiDriver.stop());
    const draDriver = await startDraTestDriver(dir.join('dra.sock'), 'v1.DRAPlugin');
    t.after(() => draDriver.stop());
    const registrars = [
      {
        file: 'gpu.sock',
        type: 'DevicePlugin',
        name: 'example.com/gpu',
        endpoint: gpu.socketPath,
        versions: ['v1beta1'],
      },
      {
        file: 'csi.sock',
        type: 'CSIPlugin',
        name: 'csi.example.com',
        endpoint: csiDriver.socketPath,
        versions: ['1.0.0'],
      },
      {
        file: 'dra.sock',
        type: 'DRAPlugin',
        name: 'dra.example.com',
        endpoint: draDriver.socketPath,
        versions: ['v1.DRAPlugin'],
      },
    ].map((p) => createExamplePlugin({ ...p, socketPath: dir.join('plugins_registry', p.file) }));
    for (const registrar of registrars) {
      t.after(() => registrar.stop());
      await registrar.start();
      assert.deepEqual(await registrar.nextStatus(), { pluginRegistered: true, error: '' });
    }
    await waitFor('the GPU inventory', async () => {
      const { text } = await call(api, 'GET', '/v1/devices');
      return JSON.parse(text).resources[0]?.healthy === 1;
    });
    const allocated = await call(api, 'POST', '/v1/devices/example.com%2Fgpu/allocations', {
      workload: 'w1',
      count: 1,
    });
    assert.equal(allocated.status, 201, allocated.text);
    assert.equal((await call(api, 'GET', '/v1/plugins/nope/x')).status, 404);

    const metrics = await waitFor('DRA connected and a publish', async () => {
      const { text } = await call(api, 'GET', '/metrics');
      const connected = sample(text, 'berth_dra_instances_connected{driver="dra.example.com"}');
      const age = sample(text, 'berth_cluster_last_publish_age_seconds');
      return connected === 1 && age !== undefined && !Number.isNaN(age) ? text : undefined;
    });
    assert.equal(
      sample(metrics, `berth_build_info{version="${berthVersion()}",node="${process.versions.node}"}`),
      1,
    );
    assert.equal(sample(metrics, 'berth_devices_healthy{resource="example.com/gpu"}'), 1);
    assert.equal(sample(metrics, 'berth_devices_unhealthy{resource="example.com/gpu"}'), 1);
    assert.equal(sample(metrics, 'berth_devices_allocated{resource="example.com/gpu"}'), 1);
    assert.equal(sample(metrics, 'berth_csi_drivers_registered'), 1);
    assert.equal(sample(metrics, 'berth_cluster_lease_state{state="held"}'), 1);
    const age = sample(metrics, 'berth_cluster_last_publish_age_seconds') ?? -1;
    assert.ok(age >= 0 && age < 30, `last publish age ${age}`);
    // Route patterns, not raw URLs; an unknown route is "unmatched".
    assert.equal(
      sample(metrics, 'berth_api_requests_total{route="/v1/devices/*",method="POST",status="201"}'),
      1,
    );
    assert.equal(
      sample(metrics, 'berth_api_requests_total{route="/v1/plugins/*",method="GET",status="404"}'),
      1,
    );
    assert.ok(
      (sample(metrics, 'berth_api_requests_total{route="/v1/devices",method="GET",status="200"}') ?? 0) >= 1,
    );
    assert.doesNotMatch(metrics, /route="\/v1\/devices\/example/);
    assert.ok(
      (sample(metrics, 'berth_api_request_duration_seconds_count{route="/v1/devices/*",method="POST"}') ??
        0) === 1,
    );
    assert.equal((await call(api, 'GET', '/no/such/route')).status, 404);
    const after404 = (await call(api, 'GET', '/metrics')).text;
    assert.equal(
      sample(after404, 'berth_api_requests_total{route="unmatched",method="GET",status="404"}'),
      1,
    );

    // berth status's document: handlers with their plugin counts and the cluster view.
    const status = JSON.parse((await call(api, 'GET', '/v1/status')).text);
    const handlers = new Map(status.handlers.map((h: { type: string; plugins: number }) => [h.type, h]));
    assert.deepEqual(handlers.get('DevicePlugin'), { type: 'DevicePlugin', builtin: true, plugins: 1 });
    assert.deepEqual(handlers.get('CSIPlugin'), { type: 'CSIPlugin', builtin: true, plugins: 1 });
    assert.deepEqual(handlers.get('example.com/berth-example'), {
      type: 'example.com/berth-example',
      builtin: false,
      plugins: 0,
    });
    assert.equal(status.cluster.node, 'node-m');
    assert.equal(status.cluster.leaseState, 'held');
    assert.ok(status.cluster.lastPublishAgeSeconds >= 0 && status.cluster.lastPublishAgeSeconds < 30);
    assert.deepEqual(status.storage.health, { state: 'ok', failures: 0 });
  });

  it('gives no cluster samples and a null cluster status without `cluster:`', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = resolveDaemonConfig({}, { dataDir: dir.path }, { env: {} });
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const metrics = (await call(config.apiSocketPath, 'GET', '/metrics')).text;
    assert.doesNotMatch(metrics, /berth_cluster_lease_state/);
    assert.equal(sample(metrics, 'berth_csi_drivers_registered'), 0);
    assert.doesNotMatch(metrics, /^berth_devices_healthy\{/m);
    const status = JSON.parse((await call(config.apiSocketPath, 'GET', '/v1/status')).text);
    assert.equal(status.cluster, null);
  });
});
