import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createTempDir } from '../../testing/index.js';
import { explainDaemonConfig } from './config-sources.js';

describe('berth config show: each value and where it came from', () => {
  it('names the flag, the file, the environment or the default', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    writeFileSync(
      dir.join('berth.yaml'),
      'logLevel: debug\ntimeouts: {dial: 3s}\nmetrics: {anonymous: true}\n',
    );
    const { config, settings } = explainDaemonConfig(
      { config: 'berth.yaml', logFormat: 'json' },
      {
        env: { XDG_STATE_HOME: dir.join('xdg'), KUBECONFIG: '/k' },
        home: dir.path,
        cwd: dir.path,
        euid: 1000,
      },
    );
    const source = (key: string) => settings.find((s) => s.key === key)?.source;
    const value = (key: string) => settings.find((s) => s.key === key)?.value;
    const file = `file ${dir.join('berth.yaml')}`;
    assert.equal(config.configFile, dir.join('berth.yaml'));
    assert.equal(source('logLevel'), file);
    assert.equal(value('logLevel'), 'debug');
    assert.equal(source('timeouts.dialMs'), file);
    assert.equal(value('timeouts.dialMs'), 3000);
    assert.equal(source('timeouts.getInfoMs'), 'default');
    assert.equal(source('api.metricsAnonymous'), file);
    assert.equal(source('logFormat'), 'flag --log-format');
    assert.equal(source('dataDir'), 'env $XDG_STATE_HOME');
    assert.equal(value('dataDir'), dir.join('xdg', 'berth'));
    assert.equal(source('statePath'), 'env $XDG_STATE_HOME');
    assert.equal(source('handlers'), 'default');
    assert.equal(source('shutdownTimeoutMs'), 'default');
    assert.equal(
      settings.some((s) => s.key === 'scope' || s.key === 'configFile'),
      false,
      'shown in the header, not as settings',
    );
  });

  it('as root: the system defaults, and /etc/berth/config.yaml (moved here) as the file', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    mkdirSync(dir.join('etc'));
    writeFileSync(dir.join('etc', 'config.yaml'), 'objects: {strategy: Get}\n');
    const { config, settings } = explainDaemonConfig(
      {},
      { env: {}, home: dir.path, cwd: dir.path, euid: 0, systemConfigFile: dir.join('etc', 'config.yaml') },
    );
    const source = (key: string) => settings.find((s) => s.key === key)?.source;
    assert.equal(config.scope, 'system');
    assert.equal(source('dataDir'), 'default (root)');
    assert.equal(source('apiSocketPath'), 'default (root)');
    assert.equal(source('objects.strategy'), `file ${dir.join('etc', 'config.yaml')}`);
  });
});
