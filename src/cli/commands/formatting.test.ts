import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { createTempDir } from '../../testing/index.js';
import { formatEventLine } from './events.js';
import { exampleSocketPath, parseExampleVersions } from './example-plugin.js';
import { formatPlugins, type PluginRow } from './plugins.js';
import { formatPods, parseNamespacedName, readPodFile } from './pods.js';
import { formatSockets, type SocketRow } from './sockets.js';
import { formatStatus } from './status.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('CLI output for people', () => {
  it('shows plugins as a table', () => {
    const row: PluginRow = {
      type: 'example.com/berth-example',
      name: 'alpha',
      version: 'v1beta1',
      endpoint: '/p/alpha.sock',
      versions: ['v1beta1', 'v1beta2'],
      socketPath: '/p/alpha.sock',
      registeredAt: new Date(NOW - 5000).toISOString(),
      source: 'kubelet.sock',
      options: {},
      instances: 2,
      observed: false,
    };
    const lines = formatPlugins([row], NOW).split('\n');
    assert.match(lines[0] ?? '', /^TYPE\s+NAME\s+VERSIONS\s+INSTANCES\s+REGISTERED\s+SOURCE\s+SOCKET$/);
    assert.match(
      lines[1] ?? '',
      /^example\.com\/berth-example\s+alpha\s+v1beta1,v1beta2\s+2\s+5s ago\s+kubelet\.sock\s+\/p\/alpha\.sock$/,
    );
    assert.equal(formatPlugins([], NOW), 'no plugins registered');
  });

  it('shows sockets with their last error and next retry', () => {
    const socket: SocketRow = {
      socketPath: '/p/odd.sock',
      state: 'backoff',
      plugin: { type: 'x/unknown', name: 'odd' },
      endpoint: null,
      versions: [],
      lastError: { code: 'BERTH_NO_HANDLER', message: 'no handler registered for plugin type: x/unknown' },
      retryAt: new Date(NOW + 2000).toISOString(),
      verdict: null,
      attempts: 3,
      registeredAt: null,
    };
    const text = formatSockets([socket], NOW);
    assert.match(text, /\/p\/odd\.sock\s+backoff\s+x\/unknown\/odd\s+3\s+in 2s\s+no handler registered/);
    assert.equal(formatSockets([], NOW), 'no plugin sockets found');
  });

  it('prints one line per event', () => {
    const registered = formatEventLine('registered', {
      at: '2026-01-01T12:00:00.000Z',
      plugin: { type: 't', name: 'n', socketPath: '/p/n.sock' },
    });
    assert.equal(registered, '2026-01-01T12:00:00.000Z  registered      t/n  /p/n.sock');
    const failed = formatEventLine('failed', {
      at: 'T',
      socketPath: '/p/x.sock',
      plugin: null,
      error: { code: 'BERTH_DIAL_FAILED', message: 'dial failed' },
      retryAt: 'R',
      attempts: 2,
    });
    assert.equal(failed, 'T  failed          /p/x.sock  dial failed (attempt 2, retry at R)');
    assert.match(formatEventLine('lagged', { at: 'T', dropped: 7 }), /7 events were dropped.*berth plugins/);
  });

  it('summarises status, including a storage corruption', () => {
    const text = formatStatus({
      version: '0.1.0',
      state: 'ready',
      pid: 42,
      uptimeSeconds: 9,
      counts: {
        plugins: 2,
        instances: 3,
        sockets: { total: 3, registered: 2, pending: 0, failed: 0, backoff: 1 },
      },
      storage: {
        path: '/d/state.db',
        corruption: { movedTo: '/d/state.db.corrupt-1', error: { message: 'bad' } },
      },
    });
    assert.match(text, /^version:\s+0\.1\.0$/m);
    assert.match(text, /^plugins:\s+2 \(3 instances\)$/m);
    assert.match(text, /^storage:\s+CORRUPT state was set aside to \/d\/state\.db\.corrupt-1: bad$/m);
  });

  it('lists pods with what they reference', () => {
    const text = formatPods([
      { namespace: 'ns1', name: 'web', uid: 'u1', secrets: ['a', 'b'], configMaps: [], podVolumes: [] },
      {
        namespace: 'ns1',
        name: 'db',
        uid: 'u2',
        secrets: [],
        configMaps: [],
        podVolumes: [{ name: 'scratch', driver: 'd', volumeId: 'csi-1', targetPath: '/t', readOnly: false }],
      },
    ]);
    assert.match(text.split('\n')[1] ?? '', /^ns1\s+web\s+u1\s+a,b\s+-\s+-$/);
    assert.match(text.split('\n')[2] ?? '', /^ns1\s+db\s+u2\s+-\s+-\s+scratch$/);
  });
});

describe('CLI argument checks', () => {
  it('reads NAMESPACE/NAME', () => {
    assert.deepEqual(parseNamespacedName('ns1/web', 'the pod'), ['ns1', 'web']);
    for (const bad of ['web', 'a/b/c', '/web', 'ns1/']) {
      assert.throws(
        () => parseNamespacedName(bad, 'the pod'),
        (err) => isBerthError(err, 'BERTH_USAGE'),
      );
    }
  });

  it('reads a pod manifest in YAML or JSON, defaulting the namespace', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    writeFileSync(dir.join('pod.yaml'), 'kind: Pod\nmetadata:\n  name: web\n  uid: u1\nspec: {}\n');
    const yaml = readPodFile(dir.join('pod.yaml'));
    assert.equal(yaml.namespace, 'default');
    assert.deepEqual(yaml.pod.metadata, { name: 'web', uid: 'u1', namespace: 'default' });
    writeFileSync(dir.join('pod.json'), '{"metadata":{"name":"api","namespace":"ns2","uid":"u2"}}');
    assert.equal(readPodFile(dir.join('pod.json')).namespace, 'ns2');
    writeFileSync(dir.join('nameless.yaml'), 'metadata: {uid: u}\n');
    assert.throws(() => readPodFile(dir.join('nameless.yaml')), /metadata\.name is missing/);
    writeFileSync(dir.join('list.yaml'), '- a\n- b\n');
    assert.throws(() => readPodFile(dir.join('list.yaml')), /must hold one Pod object/);
  });

  it('places the example plugin socket in the plugins directory', () => {
    assert.equal(exampleSocketPath({ name: 'alpha', pluginsDir: '/p' }), '/p/alpha.sock');
    assert.equal(exampleSocketPath({ name: 'alpha', dataDir: '/d' }), '/d/plugins_registry/alpha.sock');
    assert.throws(
      () => exampleSocketPath({ name: '../x', pluginsDir: '/p' }),
      (err) => isBerthError(err, 'BERTH_USAGE'),
    );
    assert.throws(
      () => exampleSocketPath({ name: 'x'.repeat(120), pluginsDir: '/p' }),
      /longer than 107 bytes/,
    );
    assert.deepEqual(parseExampleVersions(' v1 , v2,,'), ['v1', 'v2']);
    assert.throws(() => parseExampleVersions(' , '), /at least one version/);
  });
});
