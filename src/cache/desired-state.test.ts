import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError, type Logger, silentLogger } from '../common/index.js';
import { FakeClock } from '../testing/index.js';
import { createDesiredStateOfWorld } from './desired-state.js';

describe('desired state of world', () => {
  it('adds a new socket path (DSW 1)', () => {
    const clock = new FakeClock();
    const dsw = createDesiredStateOfWorld({ clock });
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    const plugins = dsw.getPluginsToRegister();
    assert.equal(plugins.length, 1);
    const [info] = plugins;
    assert.equal(info?.socketPath, '/plugins/a.sock');
    assert.equal(info?.timestamp, clock.now());
    assert.match(info?.uuid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(info?.foundInDeprecatedDir, false);
    assert.ok(dsw.pluginExists('/plugins/a.sock'));
    assert.ok(!dsw.pluginExists('/plugins/b.sock'));
  });

  it('adding the same path twice keeps one entry with a new generation (DSW 2)', async () => {
    const clock = new FakeClock();
    const dsw = createDesiredStateOfWorld({ clock });
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    const first = dsw.get('/plugins/a.sock');
    // Same clock tick: only the uuid tells the generations apart (coarse clocks, kubernetes#114136).
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    const second = dsw.get('/plugins/a.sock');
    await clock.advance(5);
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    const third = dsw.get('/plugins/a.sock');
    assert.equal(dsw.getPluginsToRegister().length, 1);
    assert.ok(first && second && third);
    assert.notEqual(second.uuid, first.uuid);
    assert.notEqual(third.uuid, second.uuid);
    assert.ok(third.timestamp > first.timestamp);
  });

  it('rejects an empty socket path with the upstream text (DSW 3)', () => {
    const dsw = createDesiredStateOfWorld();
    assert.throws(
      () => dsw.addOrUpdatePlugin(''),
      (err: unknown) =>
        err instanceof BerthError &&
        err.code === 'BERTH_SOCKET_PATH_EMPTY' &&
        err.message === 'socket path is empty',
    );
    assert.deepEqual(dsw.getPluginsToRegister(), []);
    assert.ok(!dsw.pluginExists(''));
  });

  it('add then remove leaves nothing; removing an absent path is a no-op (DSW 4)', () => {
    const dsw = createDesiredStateOfWorld();
    const changes: string[] = [];
    dsw.onChange((p) => changes.push(p));
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    dsw.removePlugin('/plugins/a.sock');
    dsw.removePlugin('/plugins/a.sock');
    dsw.removePlugin('/plugins/never.sock');
    assert.deepEqual(dsw.getPluginsToRegister(), []);
    assert.ok(!dsw.pluginExists('/plugins/a.sock'));
    assert.equal(dsw.get('/plugins/a.sock'), undefined);
    assert.deepEqual(changes, ['/plugins/a.sock', '/plugins/a.sock'], 'no-op removals do not notify');
  });

  it('records foundInDeprecatedDir per generation', () => {
    const dsw = createDesiredStateOfWorld();
    dsw.addOrUpdatePlugin('/old/a.sock', { foundInDeprecatedDir: true });
    assert.equal(dsw.get('/old/a.sock')?.foundInDeprecatedDir, true);
    dsw.addOrUpdatePlugin('/old/a.sock');
    assert.equal(dsw.get('/old/a.sock')?.foundInDeprecatedDir, false);
  });

  it('hands out copies that cannot change the cache', () => {
    const dsw = createDesiredStateOfWorld();
    dsw.addOrUpdatePlugin('/plugins/a.sock');
    const [listed] = dsw.getPluginsToRegister();
    assert.ok(listed);
    listed.uuid = 'edited';
    const got = dsw.get('/plugins/a.sock');
    assert.ok(got);
    got.socketPath = 'edited';
    assert.notEqual(dsw.get('/plugins/a.sock')?.uuid, 'edited');
    assert.equal(dsw.get('/plugins/a.sock')?.socketPath, '/plugins/a.sock');
  });

  it('calls change listeners after every add, update and removal, and unsubscribes', () => {
    const dsw = createDesiredStateOfWorld();
    const seen: Array<[string, boolean]> = [];
    const off = dsw.onChange((p) => seen.push([p, dsw.pluginExists(p)]));
    dsw.addOrUpdatePlugin('/a.sock');
    dsw.addOrUpdatePlugin('/a.sock');
    dsw.removePlugin('/a.sock');
    off();
    dsw.addOrUpdatePlugin('/b.sock');
    assert.deepEqual(seen, [
      ['/a.sock', true],
      ['/a.sock', true],
      ['/a.sock', false],
    ]);
  });

  it('contains a throwing listener: the change happens and other listeners still run', () => {
    const errors: unknown[] = [];
    const logger: Logger = {
      ...silentLogger,
      error: (fields) => errors.push(fields),
      child: () => logger,
    };
    const dsw = createDesiredStateOfWorld({ logger });
    const seen: string[] = [];
    dsw.onChange(() => {
      throw new Error('listener broke');
    });
    dsw.onChange((p) => seen.push(p));
    dsw.addOrUpdatePlugin('/a.sock');
    assert.ok(dsw.pluginExists('/a.sock'));
    assert.deepEqual(seen, ['/a.sock']);
    assert.equal(errors.length, 1);
  });
});
