import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Etcd3 } from 'etcd3';
import { isBerthError, type Logger } from '../../common/index.js';
import {
  createRecordingLogger,
  type EtcdServer,
  type LogRecord,
  startEtcdServer,
} from '../../testing/harness/index.js';
import { nextWithin, waitFor } from '../../testing/index.js';
import type { KubeObject, WatchEvent } from '../source.js';
import { createEtcdSource, type EtcdSource } from './etcd-source.js';

// One real etcd for the whole file; every test works under its own key prefix.
// Progress notifications every 250 ms let the bookmark test see one quickly.
let server: EtcdServer;
before(async () => {
  server = await startEtcdServer({ watchProgressNotifyIntervalMs: 250 });
});
after(async () => {
  await server?.stop();
});

function newSource(logger?: Logger): EtcdSource {
  const prefix = `/berth-test/${randomUUID()}/`;
  return createEtcdSource({ endpoints: [server.endpoint], prefix, ...(logger ? { logger } : {}) });
}

function secret(namespace: string, name: string, value: string, extra: Partial<KubeObject> = {}): KubeObject {
  return { metadata: { name, namespace }, data: { key: Buffer.from(value).toString('base64') }, ...extra };
}

function decoded(obj: KubeObject): string | undefined {
  const v = obj.data?.key;
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString();
}

/** The next non-bookmark event (bookmarks arrive on their own schedule). */
async function nextChange(it: AsyncIterator<WatchEvent>, what: string): Promise<WatchEvent> {
  while (true) {
    const event = await nextWithin(it, what);
    if (event.type !== 'BOOKMARK') return event;
  }
}

function objectOf(event: WatchEvent): KubeObject {
  assert.notEqual(event.type, 'BOOKMARK');
  if (event.type === 'BOOKMARK') throw new Error('unreachable');
  return event.object;
}

async function etcdWatcherCount(): Promise<number> {
  const text = await (await fetch(`${server.endpoint}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('etcd_debugging_mvcc_watcher_total '));
  assert.ok(line, 'etcd exposes etcd_debugging_mvcc_watcher_total');
  return Number(line.split(' ')[1]);
}

describe('etcd source', () => {
  test('get returns the stored object with resourceVersion = mod_revision, kind and apiVersion filled', async () => {
    const source = newSource();
    try {
      const rev1 = await source.putObject('secrets', secret('ns1', 's1', 'one', { immutable: true }));
      const first = await source.get('secrets', 'ns1', 's1');
      assert.equal(first.metadata.resourceVersion, rev1);
      assert.equal(first.metadata.name, 's1');
      assert.equal(first.metadata.namespace, 'ns1');
      assert.equal(first.kind, 'Secret');
      assert.equal(first.apiVersion, 'v1');
      assert.equal(first.immutable, true);
      assert.equal(decoded(first), 'one');

      const rev2 = await source.putObject('secrets', secret('ns1', 's1', 'two'));
      assert.ok(BigInt(rev2) > BigInt(rev1));
      const second = await source.get('secrets', 'ns1', 's1', { resourceVersion: '0' });
      assert.equal(second.metadata.resourceVersion, rev2);
      assert.equal(decoded(second), 'two');

      const cm = await source.putObject('configmaps', {
        metadata: { name: 'c1', namespace: 'ns1', resourceVersion: '999999' },
        data: { a: 'b' },
      });
      const got = await source.get('configmaps', 'ns1', 'c1');
      assert.equal(got.kind, 'ConfigMap');
      assert.equal(got.metadata.resourceVersion, cm, 'a resourceVersion given to putObject is not stored');
    } finally {
      await source.stop();
    }
  });

  test('get of a missing object fails with BERTH_OBJECT_NOT_FOUND and the kubelet text', async () => {
    const source = newSource();
    try {
      await assert.rejects(source.get('secrets', 'ns1', 'nope'), (err) => {
        assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'));
        assert.equal(err.message, 'secret "nope" not found');
        return true;
      });
      await assert.rejects(source.get('configmaps', 'ns1', 'nope'), {
        code: 'BERTH_OBJECT_NOT_FOUND',
        message: 'configmap "nope" not found',
      });
      // Same name, other namespace or resource: still not found.
      await source.putObject('secrets', secret('ns1', 'there', 'x'));
      await assert.rejects(source.get('secrets', 'ns2', 'there'), { code: 'BERTH_OBJECT_NOT_FOUND' });
      await assert.rejects(source.get('configmaps', 'ns1', 'there'), { code: 'BERTH_OBJECT_NOT_FOUND' });
      await source.deleteObject('secrets', 'ns1', 'there');
      await assert.rejects(source.get('secrets', 'ns1', 'there'), { code: 'BERTH_OBJECT_NOT_FOUND' });
    } finally {
      await source.stop();
    }
  });

  test('a value that is not an object is BERTH_UNEXPECTED_OBJECT_TYPE on get and skipped (with a warning) by list', async () => {
    const records: LogRecord[] = [];
    const source = newSource(createRecordingLogger(records));
    const raw = new Etcd3({ hosts: server.endpoint });
    try {
      await source.putObject('secrets', secret('ns1', 'good', 'ok'));
      const badKeys = {
        notjson: '{not json',
        array: '[1,2]',
        nometa: '{"data":{}}',
      };
      for (const [name, value] of Object.entries(badKeys)) {
        await raw.put(`${source.prefix}secrets/ns1/${name}`).value(value);
      }
      for (const name of Object.keys(badKeys)) {
        const key = `${source.prefix}secrets/ns1/${name}`;
        await assert.rejects(source.get('secrets', 'ns1', name), (err) => {
          assert.ok(isBerthError(err, 'BERTH_UNEXPECTED_OBJECT_TYPE'), String(err));
          assert.ok(err.message.includes(key), `message names the key: ${err.message}`);
          return true;
        });
      }
      const list = await source.list('secrets', 'ns1');
      assert.deepEqual(
        list.items.map((o) => o.metadata.name),
        ['good'],
      );
      const warned = records.filter((r) => r.level === 'warn').map((r) => JSON.stringify(r.fields));
      assert.equal(warned.length, 3);
      for (const name of Object.keys(badKeys)) {
        assert.ok(
          warned.some((w) => w.includes(`secrets/ns1/${name}`)),
          `warning for ${name}`,
        );
      }
    } finally {
      raw.close();
      await source.stop();
    }
  });

  test('list returns the namespace (or one name) at the store revision', async () => {
    const source = newSource();
    try {
      await source.putObject('secrets', secret('ns1', 'a', '1'));
      await source.putObject('secrets', secret('ns1', 'b', '2'));
      await source.putObject('secrets', secret('ns10', 'c', 'other namespace sharing a prefix'));
      await source.putObject('secrets', secret('ns2', 'd', 'other namespace'));
      const last = await source.putObject('configmaps', { metadata: { name: 'a', namespace: 'ns1' } });

      const all = await source.list('secrets', 'ns1');
      assert.deepEqual(all.items.map((o) => o.metadata.name).sort(), ['a', 'b']);
      assert.equal(all.resourceVersion, last, 'list revision is the store revision, not the newest item');
      for (const item of all.items) {
        assert.equal(item.kind, 'Secret');
        assert.match(item.metadata.resourceVersion ?? '', /^\d+$/);
      }

      const one = await source.list('secrets', 'ns1', { name: 'b' });
      assert.deepEqual(
        one.items.map((o) => decoded(o)),
        ['2'],
      );
      assert.equal(one.resourceVersion, last);

      const none = await source.list('secrets', 'ns1', { name: 'zzz' });
      assert.deepEqual(none.items, []);
      assert.equal((await source.list('configmaps', 'ns1')).items.length, 1);
    } finally {
      await source.stop();
    }
  });

  test('watch from a list revision continues exactly after it: ADDED, MODIFIED, DELETED with the last object', async () => {
    const source = newSource();
    const controller = new AbortController();
    try {
      await source.putObject('secrets', secret('ns1', 'before', 'listed'));
      const listed = await source.list('secrets', 'ns1');
      assert.equal(listed.items.length, 1);
      // Written after the list but before the watch starts: must still be seen, exactly once.
      const revAdd = await source.putObject('secrets', secret('ns1', 'x', 'v1'));

      const it = source
        .watch('secrets', 'ns1', { resourceVersion: listed.resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      const added = await nextChange(it, 'ADDED x');
      assert.equal(added.type, 'ADDED');
      assert.equal(objectOf(added).metadata.name, 'x');
      assert.equal(objectOf(added).metadata.resourceVersion, revAdd);

      const revMod = await source.putObject('secrets', secret('ns1', 'x', 'v2'));
      const modified = await nextChange(it, 'MODIFIED x');
      assert.equal(modified.type, 'MODIFIED');
      assert.equal(decoded(objectOf(modified)), 'v2');
      assert.equal(objectOf(modified).metadata.resourceVersion, revMod);

      await source.putObject('secrets', secret('ns2', 'x', 'other namespace'));
      await source.putObject('configmaps', { metadata: { name: 'x', namespace: 'ns1' } });
      const revDel = await source.deleteObject('secrets', 'ns1', 'x');
      const deleted = await nextChange(it, 'DELETED x');
      assert.equal(deleted.type, 'DELETED');
      assert.equal(objectOf(deleted).metadata.name, 'x');
      assert.equal(objectOf(deleted).kind, 'Secret');
      assert.equal(decoded(objectOf(deleted)), 'v2', 'a deletion carries the last known object');
      assert.equal(objectOf(deleted).metadata.resourceVersion, revDel);

      // Re-creating the name is an ADDED again.
      await source.putObject('secrets', secret('ns1', 'x', 'v3'));
      const readded = await nextChange(it, 'ADDED x again');
      assert.equal(readded.type, 'ADDED');
      assert.equal(decoded(objectOf(readded)), 'v3');
    } finally {
      controller.abort();
      await source.stop();
    }
  });

  test('a watch by name sees only that object', async () => {
    const source = newSource();
    const controller = new AbortController();
    try {
      const { resourceVersion } = await source.list('secrets', 'ns1', { name: 'mine' });
      const it = source
        .watch('secrets', 'ns1', { name: 'mine', resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      await source.putObject('secrets', secret('ns1', 'other', 'x'));
      await source.putObject('secrets', secret('ns1', 'mine2', 'shares a prefix with mine'));
      await source.putObject('secrets', secret('ns1', 'mine', 'y'));
      const event = await nextChange(it, 'ADDED mine');
      assert.equal(event.type, 'ADDED');
      assert.equal(objectOf(event).metadata.name, 'mine');
      await source.deleteObject('secrets', 'ns1', 'other');
      await source.deleteObject('secrets', 'ns1', 'mine');
      const gone = await nextChange(it, 'DELETED mine');
      assert.equal(gone.type, 'DELETED');
      assert.equal(objectOf(gone).metadata.name, 'mine');
    } finally {
      controller.abort();
      await source.stop();
    }
  });

  test('an unreadable value in a watch is reported deleted (as a re-list would show), with a warning', async () => {
    const records: LogRecord[] = [];
    const source = newSource(createRecordingLogger(records));
    const raw = new Etcd3({ hosts: server.endpoint });
    const controller = new AbortController();
    try {
      const { resourceVersion } = await source.list('secrets', 'ns1');
      const it = source
        .watch('secrets', 'ns1', { resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      await source.putObject('secrets', secret('ns1', 'x', 'good'));
      assert.equal((await nextChange(it, 'ADDED x')).type, 'ADDED');
      await raw.put(`${source.prefix}secrets/ns1/x`).value('garbage');
      const event = await nextChange(it, 'DELETED x');
      assert.equal(event.type, 'DELETED');
      assert.equal(objectOf(event).metadata.name, 'x');
      assert.ok(
        records.some((r) => r.level === 'warn' && JSON.stringify(r.fields).includes('secrets/ns1/x')),
      );
      // The watch goes on.
      await source.putObject('secrets', secret('ns1', 'x', 'good again'));
      assert.equal(decoded(objectOf(await nextChange(it, 'MODIFIED x'))), 'good again');
    } finally {
      controller.abort();
      raw.close();
      await source.stop();
    }
  });

  test('progress notifications arrive as BOOKMARKs at the store revision', async () => {
    const source = newSource();
    const controller = new AbortController();
    try {
      const rev = await source.putObject('secrets', secret('ns1', 'x', 'v'));
      const it = source
        .watch('secrets', 'ns1', { resourceVersion: rev, signal: controller.signal })
        [Symbol.asyncIterator]();
      const event = await nextWithin(it, 'a bookmark');
      assert.equal(event.type, 'BOOKMARK');
      if (event.type !== 'BOOKMARK') return;
      assert.ok(BigInt(event.resourceVersion) >= BigInt(rev));
    } finally {
      controller.abort();
      await source.stop();
    }
  });

  test('a compacted resourceVersion fails the watch with BERTH_RESOURCE_VERSION_TOO_OLD', async () => {
    const source = newSource();
    const controller = new AbortController();
    try {
      const { resourceVersion } = await source.list('secrets', 'ns1');
      await source.putObject('secrets', secret('ns1', 'x', 'v1'));
      await source.putObject('secrets', secret('ns1', 'x', 'v2'));
      const compactedAt = await source.compact();
      assert.ok(BigInt(compactedAt) > BigInt(resourceVersion) + 1n);

      const events: WatchEvent[] = [];
      await assert.rejects(
        (async () => {
          for await (const event of source.watch('secrets', 'ns1', {
            resourceVersion,
            signal: controller.signal,
          })) {
            events.push(event);
          }
        })(),
        (err) => {
          assert.ok(isBerthError(err, 'BERTH_RESOURCE_VERSION_TOO_OLD'), String(err));
          assert.match(err.message, /compacted/);
          return true;
        },
      );
      assert.deepEqual(
        events.filter((e) => e.type !== 'BOOKMARK'),
        [],
      );

      // The caller re-lists and watches from the fresh revision: that works.
      const relisted = await source.list('secrets', 'ns1');
      assert.equal(decoded(relisted.items[0] as KubeObject), 'v2');
      const it = source
        .watch('secrets', 'ns1', { resourceVersion: relisted.resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      await source.putObject('secrets', secret('ns1', 'x', 'v3'));
      assert.equal(decoded(objectOf(await nextChange(it, 'MODIFIED after re-list'))), 'v3');
    } finally {
      controller.abort();
      await source.stop();
    }
  });

  test('abort ends the watch and leaves no watcher in etcd', async () => {
    const source = newSource();
    const controller = new AbortController();
    try {
      await waitFor('no etcd watchers from earlier tests', async () => (await etcdWatcherCount()) === 0);
      const { resourceVersion } = await source.list('secrets', 'ns1');
      const it = source
        .watch('secrets', 'ns1', { resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      await source.putObject('secrets', secret('ns1', 'x', 'v'));
      assert.equal((await nextChange(it, 'ADDED x')).type, 'ADDED');
      assert.equal(await etcdWatcherCount(), 1);

      const pending = it.next();
      controller.abort();
      const result = await pending;
      assert.equal(result.done, true, 'the watch ends cleanly on abort');
      await waitFor('etcd watcher cancelled', async () => (await etcdWatcherCount()) === 0);

      // A watch started with an already-aborted signal yields nothing.
      const again = source.watch('secrets', 'ns1', { resourceVersion, signal: controller.signal });
      for await (const _ of again) assert.fail('no events after abort');
    } finally {
      await source.stop();
    }
  });

  test('a watch survives an etcd restart without losing or repeating events', async () => {
    const own = await startEtcdServer();
    const source = createEtcdSource({ endpoints: [own.endpoint] });
    const controller = new AbortController();
    try {
      const { resourceVersion } = await source.list('secrets', 'ns1');
      const it = source
        .watch('secrets', 'ns1', { resourceVersion, signal: controller.signal })
        [Symbol.asyncIterator]();
      await source.putObject('secrets', secret('ns1', 'a', 'before restart'));
      const first = await nextChange(it, 'ADDED a');
      assert.equal(objectOf(first).metadata.name, 'a');

      await own.restart();
      // The client reconnects on its own; a write may need a retry while it does.
      const revB = await waitFor('a write after the restart', () =>
        source.putObject('secrets', secret('ns1', 'b', 'after restart')),
      );
      const second = await nextChange(it, 'ADDED b after the restart');
      assert.equal(second.type, 'ADDED');
      assert.equal(objectOf(second).metadata.name, 'b', 'a is not delivered again');
      assert.equal(objectOf(second).metadata.resourceVersion, revB);
      await source.deleteObject('secrets', 'ns1', 'a');
      assert.equal((await nextChange(it, 'DELETED a')).type, 'DELETED');
    } finally {
      controller.abort();
      await source.stop();
      await own.stop();
    }
  });

  test('close ends open watches, cancels their etcd watchers, and refuses further calls', async () => {
    const source = newSource();
    const controller = new AbortController();
    await waitFor('no etcd watchers from earlier tests', async () => (await etcdWatcherCount()) === 0);
    const { resourceVersion } = await source.list('secrets', 'ns1');
    const it = source
      .watch('secrets', 'ns1', { resourceVersion, signal: controller.signal })
      [Symbol.asyncIterator]();
    await source.putObject('secrets', secret('ns1', 'x', 'v'));
    assert.equal((await nextChange(it, 'ADDED x')).type, 'ADDED');
    const pending = it.next();
    await source.stop();
    assert.equal((await pending).done, true);
    await waitFor('etcd watcher cancelled', async () => (await etcdWatcherCount()) === 0);
    await assert.rejects(source.get('secrets', 'ns1', 'x'), { code: 'BERTH_SHUT_DOWN' });
    await source.stop(); // idempotent
  });

  test('a client passed in is reused and not closed by close()', async () => {
    const client = new Etcd3({ hosts: server.endpoint });
    try {
      const prefix = `/berth-test/${randomUUID()}`;
      const source = createEtcdSource({ endpoints: [], client, prefix });
      assert.equal(source.prefix, `${prefix}/`, 'a trailing slash is added');
      await source.putObject('secrets', secret('ns1', 'x', 'v'));
      await source.stop();
      assert.ok((await client.get(`${prefix}/secrets/ns1/x`).string())?.includes('"x"'));
    } finally {
      client.close();
    }
  });

  test('bad arguments and an unreachable etcd give clear errors', async () => {
    const source = newSource();
    try {
      await assert.rejects(source.get('secrets', 'a/b', 'x'), { code: 'BERTH_INVALID_ARGUMENT' });
      await assert.rejects(source.get('secrets', 'ns', ''), { code: 'BERTH_INVALID_ARGUMENT' });
      await assert.rejects(source.putObject('secrets', { metadata: { name: 'x' } }), {
        code: 'BERTH_INVALID_ARGUMENT',
        message: /no namespace/,
      });
      assert.throws(
        () => source.watch('secrets', 'ns', { resourceVersion: 'abc', signal: new AbortController().signal }),
        { code: 'BERTH_INVALID_ARGUMENT' },
      );
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(source.get('secrets', 'ns', 'x', { signal: controller.signal }), {
        code: 'BERTH_ABORTED',
      });
    } finally {
      await source.stop();
    }
    assert.throws(() => createEtcdSource({ endpoints: [] }), { code: 'BERTH_INVALID_ARGUMENT' });

    // Nothing listens on a port we just released: the call fails as a source failure.
    const dead = createEtcdSource({ endpoints: ['http://127.0.0.1:1'] });
    try {
      await assert.rejects(dead.get('secrets', 'ns', 'x'), (err) => {
        assert.ok(isBerthError(err, 'BERTH_SOURCE_FAILED'), String(err));
        assert.ok(err.cause !== undefined);
        return true;
      });
    } finally {
      await dead.stop();
    }
  });
});
