/**
 * The documented caps on PUT /v1/pods: the pod document's size (413), the
 * distinct secrets and configmaps one pod references and the pods registered
 * at once (422), each naming its config key; a refused pod registers nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { silentLogger, systemClock } from '../../common/index.js';
import { getConfigMapNames, getSecretNames, type Pod } from '../../objects/index.js';
import { EventBus } from '../event-bus.js';
import { createPodRegistry } from '../pod-registry.js';
import { type ApiApp, createApiApp } from './api-server.js';
import type { ApiBackend } from './api-types.js';

function podWith(uid: string, secrets: number, configMaps = 0) {
  return {
    metadata: { uid },
    spec: {
      containers: [{ name: 'c' }],
      volumes: [
        ...Array.from({ length: secrets }, (_, i) => ({
          name: `s${i}`,
          secret: { secretName: `secret-${i}` },
        })),
        ...Array.from({ length: configMaps }, (_, i) => ({ name: `c${i}`, configMap: { name: `cm-${i}` } })),
      ],
    },
  };
}

describe('pod caps', () => {
  let api: ApiApp;
  const registered: string[] = [];
  before(async () => {
    const metrics = new Registry();
    const backend: ApiBackend = {
      plugins: { types: () => [], listPlugins: () => undefined, listInstances: () => [] },
      sockets: () => [],
      events: new EventBus({ clock: systemClock }),
      pods: createPodRegistry({
        manager: {
          registerPod: (pod) => registered.push(pod.metadata.uid),
          unregisterPod: (pod) => registered.splice(registered.indexOf(pod.metadata.uid), 1),
        },
        secretNames: (pod) => getSecretNames(pod as Pod),
        configMapNames: (pod) => getConfigMapNames(pod as Pod),
        maxPods: 2,
        maxReferencesPerPod: 3,
      }),
      objects: { get: () => assert.fail('unused') },
      metrics: { contentType: metrics.contentType, render: () => metrics.metrics() },
      status: () => ({}) as ReturnType<ApiBackend['status']>,
      readiness: () => ({ ready: true, checks: [] }),
    };
    api = await createApiApp(backend, {
      clock: systemClock,
      logger: silentLogger,
      bodyLimitBytes: 64 * 1024,
      podBodyLimitBytes: 2048,
      sseQueueSize: 16,
      sseHeartbeatMs: 60_000,
    });
  });
  after(() => api.app.close());

  const put = (name: string, body: unknown) =>
    api.app.inject({
      method: 'PUT',
      url: `/v1/pods/ns/${name}`,
      payload: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });

  it('refuses a pod document over objects.maxPodBytes with 413 naming the cap', async () => {
    const big = await put('big', { metadata: { uid: 'big', labels: { pad: 'x'.repeat(4096) } } });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().error.code, 'BERTH_PAYLOAD_TOO_LARGE');
    assert.match(big.json().error.message, /objects\.maxPodBytes \(2048 bytes\)/);
    assert.deepEqual(registered, []);
  });

  it('refuses more distinct references than objects.maxReferencesPerPod with 422', async () => {
    const many = await put('many', podWith('many', 2, 2));
    assert.equal(many.statusCode, 422);
    assert.equal(many.json().error.code, 'BERTH_LIMIT_EXCEEDED');
    assert.match(
      many.json().error.message,
      /references 4 secrets and configmaps, more than objects\.maxReferencesPerPod \(3\)/,
    );
    assert.deepEqual(registered, [], 'nothing of the refused pod was registered');
    assert.equal((await put('three', podWith('three', 2, 1))).statusCode, 200, 'at the cap is fine');
  });

  it('refuses a pod over objects.maxPods with 422, but still takes a replacement of a registered one', async () => {
    assert.equal((await put('second', podWith('second', 1))).statusCode, 200);
    const third = await put('third', podWith('third', 1));
    assert.equal(third.statusCode, 422);
    assert.equal(third.json().error.code, 'BERTH_LIMIT_EXCEEDED');
    assert.match(third.json().error.message, /objects\.maxPods \(2\)/);
    assert.equal(
      (await put('second', podWith('second-v2', 1))).statusCode,
      200,
      'a new UID for a registered name',
    );
    assert.deepEqual([...registered].sort(), ['second-v2', 'three']);
    assert.equal((await api.app.inject({ method: 'DELETE', url: '/v1/pods/ns/three' })).statusCode, 200);
    assert.equal((await put('third', podWith('third', 1))).statusCode, 200, 'room again after a delete');
  });
});
