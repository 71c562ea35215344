import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { createTempDir } from '../../testing/index.js';
import { loadDaemonConfig, resolveDaemonConfig } from './config.js';
import { defaultApiSocket, defaultPaths, SYSTEM_PATHS } from './paths.js';

// Root is selected by the euid option, so these run the same as root or not;
// the system config file is moved into a temp dir (tests never read /etc).
describe('default paths: system layout for root, XDG for users', () => {
  const home = '/home/someone';

  it('root with no data directory chosen gets /var/lib/berth, /run/berth/berth.sock and /etc/berth/config.yaml', () => {
    assert.deepEqual(defaultPaths({ env: { XDG_STATE_HOME: '/x' }, home, euid: 0 }), {
      scope: 'system',
      dataDir: '/var/lib/berth',
      dataDirSource: 'default',
      apiSocketPath: '/run/berth/berth.sock',
      configFile: '/etc/berth/config.yaml',
    });
    const config = resolveDaemonConfig({}, {}, { env: {}, home, cwd: '/w', euid: 0 });
    assert.equal(config.scope, 'system');
    assert.equal(config.dataDir, '/var/lib/berth');
    assert.equal(config.statePath, '/var/lib/berth/state.db');
    assert.equal(config.pluginsDir, '/var/lib/berth/plugins_registry');
    assert.equal(config.apiSocketPath, '/run/berth/berth.sock');
    assert.equal(config.api.tokenFile, '/var/lib/berth/api-token');
  });

  it('root that names a data directory (flag or $BERTH_DATA_DIR) keeps everything in it', () => {
    const flagged = resolveDaemonConfig({}, { dataDir: '/d' }, { env: {}, home, cwd: '/w', euid: 0 });
    assert.equal(flagged.scope, 'user');
    assert.equal(flagged.apiSocketPath, '/d/berth.sock');
    const env = resolveDaemonConfig({}, {}, { env: { BERTH_DATA_DIR: '/e' }, home, cwd: '/w', euid: 0 });
    assert.equal(env.apiSocketPath, '/e/berth.sock');
    assert.equal(defaultApiSocket(undefined, { env: { BERTH_DATA_DIR: '/e' }, euid: 0 }), '/e/berth.sock');
  });

  it('a data directory moved by the system config file keeps the socket in /run/berth, where clients look', () => {
    const config = resolveDaemonConfig({ dataDir: '/srv/berth' }, {}, { env: {}, home, cwd: '/w', euid: 0 });
    assert.equal(config.dataDir, '/srv/berth');
    assert.equal(config.apiSocketPath, SYSTEM_PATHS.apiSocketPath);
  });

  it('a user keeps the XDG layout', () => {
    const paths = defaultPaths({ env: {}, home, euid: 1000 });
    assert.equal(paths.scope, 'user');
    assert.equal(paths.dataDir, '/home/someone/.local/state/berth');
    assert.equal(paths.apiSocketPath, '/home/someone/.local/state/berth/berth.sock');
    assert.equal(paths.configFile, undefined);
  });
});

describe('the system config file', () => {
  const setup = (t: { after(fn: () => void): void }) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const systemConfigFile = dir.join('etc/config.yaml');
    mkdirSync(dir.join('etc'));
    const load = (flags = {}) =>
      loadDaemonConfig(flags, { env: {}, home: dir.path, cwd: dir.path, euid: 0, systemConfigFile });
    return { dir, systemConfigFile, load };
  };

  it('is read as root when it exists, with paths relative to it; --config wins', (t) => {
    const { dir, systemConfigFile, load } = setup(t);
    writeFileSync(systemConfigFile, 'logLevel: debug\nobjects: {source: {type: directory, root: objs}}\n');
    const config = load();
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.configFile, systemConfigFile);
    assert.deepEqual(config.objects.source, { type: 'directory', root: dir.join('etc/objs') });
    writeFileSync(dir.join('mine.yaml'), 'logLevel: warn\n');
    const explicit = load({ config: 'mine.yaml' });
    assert.equal(explicit.logLevel, 'warn');
    assert.equal(explicit.configFile, dir.join('mine.yaml'));
  });

  it('is not read by a user, nor by root that named a data directory', (t) => {
    const { dir, systemConfigFile } = setup(t);
    writeFileSync(systemConfigFile, 'logLevel: debug\n');
    const opts = { env: {}, home: dir.path, cwd: dir.path, systemConfigFile };
    assert.equal(loadDaemonConfig({}, { ...opts, euid: 1000 }).logLevel, 'info');
    assert.equal(loadDaemonConfig({ dataDir: dir.join('d') }, { ...opts, euid: 0 }).logLevel, 'info');
  });

  it('missing is no config at all', (t) => {
    const { load } = setup(t);
    const config = load();
    assert.equal(config.configFile, undefined);
    assert.equal(config.logLevel, 'info');
  });

  it('unreadable is no config at all', (t) => {
    const { systemConfigFile, load } = setup(t);
    // A file below a directory berth cannot search: ENOTDIR stands in for a permission
    // error, which root (who runs this in CI) never gets.
    writeFileSync(systemConfigFile.replace('config.yaml', 'not-a-dir'), '');
    const config = loadDaemonConfig(
      {},
      {
        env: {},
        euid: 0,
        systemConfigFile: systemConfigFile.replace('config.yaml', 'not-a-dir/config.yaml'),
      },
    );
    assert.equal(config.configFile, undefined);
    if (process.geteuid?.() !== 0) {
      writeFileSync(systemConfigFile, 'logLevel: debug\n');
      chmodSync(systemConfigFile, 0o000);
      assert.equal(load().logLevel, 'info');
    }
  });

  it('present but invalid is an error naming the file and the key', (t) => {
    const { systemConfigFile, load } = setup(t);
    writeFileSync(systemConfigFile, 'logLevel: chatty\n');
    assert.throws(
      () => load(),
      (err) =>
        isBerthError(err, 'BERTH_CONFIG_INVALID') &&
        err.message.startsWith(`config ${systemConfigFile}: logLevel: expected one of`),
    );
    writeFileSync(systemConfigFile, 'logFormat: xml\n');
    assert.throws(
      () => load(),
      new RegExp(`config ${systemConfigFile}: logFormat: expected one of auto\\|json\\|text`),
    );
  });
});
