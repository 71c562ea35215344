import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { createTempDir } from '../../testing/index.js';
import { loadConfigFile, loadDaemonConfig, parseConfigDocument, resolveDaemonConfig } from './config.js';
import { EXAMPLE_PLUGIN_TYPE } from './defaults.js';

function configErrorOf(document: unknown): string {
  try {
    parseConfigDocument(document, '/x.yaml');
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_CONFIG_INVALID'), String(err));
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(document)} to be rejected`);
}

describe('config file validation', () => {
  it('names the bad key in every error', () => {
    const cases: Array<[unknown, string]> = [
      [
        { objects: { strategy: 'Fast' } },
        'config /x.yaml: objects.strategy: expected one of Watch|Cache|Get',
      ],
      [{ objects: { colour: 'red' } }, 'config /x.yaml: objects.colour: unknown key'],
      [{ typo: 1 }, 'config /x.yaml: typo: unknown key'],
      [{ mode: 'kubelet' }, 'config /x.yaml: mode: expected one of registrar|observe'],
      [{ force: 'yes' }, 'config /x.yaml: force: expected true or false'],
      [{ resyncPeriod: 'soon' }, 'config /x.yaml: resyncPeriod: expected a duration'],
      [{ timeouts: { dial: true } }, 'config /x.yaml: timeouts.dial: expected a duration'],
      [
        { handlers: [{ type: 'a', versions: [] }] },
        'config /x.yaml: handlers[0].versions: expected at least one version',
      ],
      [
        { handlers: [{ type: 'CSIPlugin', versions: ['1'] }] },
        'config /x.yaml: handlers[0].type: CSIPlugin has a built-in handler',
      ],
      [
        {
          handlers: [
            { type: 'a', versions: ['1'] },
            { type: 'a', versions: ['2'] },
          ],
        },
        'config /x.yaml: handlers[1].type: duplicate of handlers[0]',
      ],
      [{ handlers: [{ versions: ['1'] }] }, 'config /x.yaml: handlers[0].type: expected a string'],
      [{ handlerOptions: { Foo: {} } }, 'config /x.yaml: handlerOptions.Foo: unknown key'],
      [
        { handlerOptions: { DRAPlugin: { wipeDelay: 'soon' } } },
        'config /x.yaml: handlerOptions.DRAPlugin.wipeDelay: expected a duration',
      ],
      [
        { handlerOptions: { DRAPlugin: { maxClaimsPerCall: 0 } } },
        'config /x.yaml: handlerOptions.DRAPlugin.maxClaimsPerCall: expected a number greater than 0',
      ],
      [
        { objects: { source: 'nfs' } },
        'config /x.yaml: objects.source.type: expected one of directory|etcd|kubernetes',
      ],
      [
        { objects: { source: { type: 'etcd' } } },
        'config /x.yaml: objects.source.endpoints: required for an etcd source',
      ],
      [
        { objects: { source: { type: 'directory', kubeconfig: '/k' } } },
        'config /x.yaml: objects.source.kubeconfig: not used by a directory source',
      ],
      [
        { liveness: { failureThreshold: 0 } },
        'config /x.yaml: liveness.failureThreshold: expected a number greater than 0',
      ],
      [{ liveness: { enabled: 'yes' } }, 'config /x.yaml: liveness.enabled: expected true or false'],
      [
        { registry: { subscriberQueueSize: 2.5 } },
        'config /x.yaml: registry.subscriberQueueSize: expected a whole number',
      ],
      [{ listen: 'localhost' }, 'config /x.yaml: listen: expected "HOST:PORT"'],
      [
        { logLevel: 'loud' },
        'config /x.yaml: logLevel: expected one of trace|debug|info|warn|error|fatal|silent',
      ],
      [{ dataDir: 5 }, 'config /x.yaml: dataDir: expected a string'],
      [['a'], 'config /x.yaml: expected a mapping of keys at the top level'],
    ];
    for (const [document, expected] of cases) {
      const message = configErrorOf(document);
      assert.ok(message.startsWith(expected), `${JSON.stringify(document)} gave: ${message}`);
      assert.ok(!message.includes('\n'), 'one line');
    }
  });

  it('reads YAML and JSON files and reports unreadable ones', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const yaml = dir.join('berth.yaml');
    writeFileSync(yaml, 'objects:\n  strategy: Cache\n  ttl: 2m\nshutdownTimeout: 3s\n');
    assert.deepEqual(loadConfigFile(yaml), {
      objects: { strategy: 'Cache', ttl: 120_000 },
      shutdownTimeout: 3000,
    });
    const json = dir.join('berth.json');
    writeFileSync(json, '{"resyncPeriod": 500, "liveness": {"enabled": false}}');
    assert.deepEqual(loadConfigFile(json), { resyncPeriod: 500, liveness: { enabled: false } });
    const broken = dir.join('broken.yaml');
    writeFileSync(broken, 'objects: [unclosed');
    assert.throws(() => loadConfigFile(broken), /^BerthError: config .*broken\.yaml: not valid YAML or JSON/);
    assert.throws(
      () => loadConfigFile(dir.join('missing.yaml')),
      (err) =>
        isBerthError(err, 'BERTH_CONFIG_INVALID') &&
        /missing\.yaml: cannot read it \(no such file\)/.test(err.message),
    );
    writeFileSync(dir.join('empty.yaml'), '');
    assert.deepEqual(loadConfigFile(dir.join('empty.yaml')), {});
  });
});

describe('config resolution', () => {
  const home = '/home/someone';

  it("finds a user's data directory from BERTH_DATA_DIR, XDG_STATE_HOME, then the home directory", () => {
    const at = (env: Record<string, string>) =>
      resolveDaemonConfig({}, {}, { env, home, cwd: '/w', euid: 1000 }).dataDir;
    assert.equal(at({ BERTH_DATA_DIR: '/d', XDG_STATE_HOME: '/x' }), '/d');
    assert.equal(at({ XDG_STATE_HOME: '/x' }), '/x/berth');
    assert.equal(at({}), '/home/someone/.local/state/berth');
  });

  it('lays out everything under the data directory with working defaults', () => {
    const config = resolveDaemonConfig({}, { dataDir: 'data' }, { env: {}, home, cwd: '/w' });
    assert.equal(config.dataDir, '/w/data');
    assert.equal(config.pluginsDir, '/w/data/plugins_registry');
    assert.equal(config.statePath, '/w/data/state.db');
    assert.equal(config.apiSocketPath, '/w/data/berth.sock');
    assert.deepEqual(config.objects, {
      source: { type: 'directory', root: '/w/data/objects' },
      strategy: 'Watch',
      ttlMs: 60_000,
      maxPods: 110,
      maxReferencesPerPod: 256,
      maxPodBytes: 1024 * 1024,
    });
    assert.equal(config.listen, undefined);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.shutdownTimeoutMs, 10_000);
    assert.deepEqual(config.handlers, [{ type: EXAMPLE_PLUGIN_TYPE, versions: ['v1beta1', 'v1beta2'] }]);
  });

  it('lets flags override the file, and resolves file paths against the file', () => {
    const file = parseConfigDocument(
      {
        dataDir: 'state',
        pluginsDir: '~/plugins',
        listen: '127.0.0.1:7000',
        logLevel: 'debug',
        liveness: { enabled: false },
        handlers: [{ type: 'example.com/other', versions: ['v1'] }],
        objects: { source: { type: 'kubernetes', kubeconfig: 'kube.yaml' } },
      },
      '/etc/berth/berth.yaml',
    );
    const fromFile = resolveDaemonConfig(
      file,
      { config: '/etc/berth/berth.yaml' },
      { env: {}, home, cwd: '/w' },
    );
    assert.equal(fromFile.dataDir, '/etc/berth/state');
    assert.equal(fromFile.pluginsDir, '/home/someone/plugins');
    assert.deepEqual(fromFile.listen, { host: '127.0.0.1', port: 7000 });
    assert.equal(fromFile.liveness, false);
    assert.deepEqual(fromFile.objects.source, { type: 'kubernetes', kubeconfig: '/etc/berth/kube.yaml' });
    assert.deepEqual(
      fromFile.handlers.map((h) => h.type),
      [EXAMPLE_PLUGIN_TYPE, 'example.com/other'],
    );

    const flagged = resolveDaemonConfig(
      file,
      {
        config: '/etc/berth/berth.yaml',
        dataDir: '/d',
        pluginsDir: 'p',
        listen: '[::1]:0',
        logLevel: 'warn',
      },
      { env: {}, home, cwd: '/w' },
    );
    assert.equal(flagged.dataDir, '/d');
    assert.equal(flagged.pluginsDir, '/w/p');
    assert.deepEqual(flagged.listen, { host: '::1', port: 0 });
    assert.equal(flagged.logLevel, 'warn');
  });

  it('takes the mode from --observe over the file, registrar by default, and force from either', () => {
    const opts = { env: {}, home, cwd: '/w' };
    assert.equal(resolveDaemonConfig({}, {}, opts).mode, 'registrar');
    assert.equal(resolveDaemonConfig({}, {}, opts).force, false);
    assert.equal(resolveDaemonConfig({ mode: 'observe' }, {}, opts).mode, 'observe');
    assert.equal(resolveDaemonConfig({ mode: 'registrar' }, { observe: true }, opts).mode, 'observe');
    assert.equal(resolveDaemonConfig({ force: true }, {}, opts).force, true);
    assert.equal(resolveDaemonConfig({}, { force: true }, opts).force, true);
  });

  it('rejects bad flag values naming the flag', () => {
    assert.throws(
      () => resolveDaemonConfig({}, { listen: 'nowhere' }, { env: {}, home, cwd: '/w' }),
      (err) =>
        isBerthError(err, 'BERTH_CONFIG_INVALID') && err.message.startsWith('--listen: expected HOST:PORT'),
    );
    assert.throws(
      () => resolveDaemonConfig({}, { logLevel: 'chatty' }, { env: {}, home, cwd: '/w' }),
      (err) =>
        isBerthError(err, 'BERTH_CONFIG_INVALID') && err.message.startsWith('--log-level: expected one of'),
    );
    assert.throws(
      () => resolveDaemonConfig({}, { logFormat: 'xml' }, { env: {}, home, cwd: '/w' }),
      (err) =>
        isBerthError(err, 'BERTH_CONFIG_INVALID') &&
        err.message === '--log-format: expected one of auto|json|text, got "xml"',
    );
  });

  it('loads the file named by --config relative to the working directory', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    writeFileSync(join(dir.path, 'c.yaml'), 'objects: {strategy: Get}\n');
    const config = loadDaemonConfig({ config: 'c.yaml', dataDir: dir.path }, { cwd: dir.path, env: {} });
    assert.equal(config.objects.strategy, 'Get');
    assert.throws(
      () => loadDaemonConfig({ config: 'nope.yaml' }, { cwd: dir.path, env: {} }),
      /config .*nope\.yaml: cannot read it/,
    );
  });
});
