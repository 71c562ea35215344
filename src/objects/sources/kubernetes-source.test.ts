/**
 * No Kubernetes API server runs on this machine, so these tests serve RECORDED API responses
 * (test/fixtures/kubernetes: a Secret GET, a ConfigMap GET, a SecretList, 403/404/410 Status
 * bodies, a watch stream and a 410 ERROR event, in the API server's own JSON) from a small real
 * HTTP server on 127.0.0.1, and check both the requests the client made and what the source returns.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { isBerthError } from '../../common/index.js';
import { createTempDir, nextWithin, waitFor } from '../../testing/index.js';
import type { ObjectSource, WatchEvent } from '../source.js';
import { createKubernetesSource } from './kubernetes-source.js';

/** test/fixtures/kubernetes, found from here whether running from src (tsx) or dist. */
function fixturesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'test', 'fixtures', 'kubernetes'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('test/fixtures/kubernetes not found above the test file');
    dir = parent;
  }
  return join(dir, 'test', 'fixtures', 'kubernetes');
}

function fixture(name: string): string {
  return readFileSync(join(fixturesDir(), name), 'utf8');
}

interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Set when the client closed (or finished) the request's connection. */
  closed: boolean;
}

type Route = (seen: SeenRequest, res: ServerResponse, req: IncomingMessage) => void;

interface RecordedApi extends AsyncDisposable {
  url: string;
  requests: SeenRequest[];
  kubeConfig(): KubeConfig;
}

/** A real HTTP server on 127.0.0.1 that answers with recorded responses and remembers each request. */
async function startRecordedApi(route: Route): Promise<RecordedApi> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const seen: SeenRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      closed: false,
    };
    requests.push(seen);
    res.on('close', () => {
      seen.closed = true;
    });
    route(seen, res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    requests,
    kubeConfig: () => kubeConfigFor(url),
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'recorded', server, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'recorded', cluster: 'recorded', user: 'anonymous' }],
    currentContext: 'recorded',
  });
  return kc;
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** Serves the usual recorded answers by path; anything else is a 404 so a wrong path shows up. */
const recordedRoutes: Route = (seen, res) => {
  const base = '/api/v1/namespaces/shop';
  if (seen.query.watch === 'true') {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.end(fixture('secret-watch.jsonl'));
    return;
  }
  switch (seen.path) {
    case `${base}/secrets/db-credentials`:
      return sendJson(res, 200, fixture('secret-get.json'));
    case `${base}/configmaps/checkout-config`:
      return sendJson(res, 200, fixture('configmap-get.json'));
    case `${base}/secrets`:
      return sendJson(res, 200, fixture('secret-list.json'));
    default:
      return sendJson(res, 404, fixture('status-404.json'));
  }
};

async function withSource<T>(
  route: Route,
  body: (source: ObjectSource, api: RecordedApi) => Promise<T>,
): Promise<T> {
  await using api = await startRecordedApi(route);
  const source = createKubernetesSource({ kubeConfig: api.kubeConfig() });
  try {
    return await body(source, api);
  } finally {
    await source.stop();
  }
}

async function collect(iterable: AsyncIterable<WatchEvent>): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

describe('kubernetes source (recorded API responses)', () => {
  test('get reads a Secret by name and returns it as plain JSON', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      const secret = await source.get('secrets', 'shop', 'db-credentials');
      assert.equal(secret.kind, 'Secret');
      assert.equal(secret.apiVersion, 'v1');
      assert.equal(secret.metadata.name, 'db-credentials');
      assert.equal(secret.metadata.namespace, 'shop');
      assert.equal(secret.metadata.resourceVersion, '48213');
      assert.deepEqual(secret.data, { password: 'czNjcjN0LXBhc3M=', username: 'Y2hlY2tvdXQ=' });
      assert.equal(secret.type, 'Opaque');
      assert.equal(typeof secret.metadata.creationTimestamp, 'string', 'no Date objects leak out');
      assert.deepEqual(
        api.requests.map((r) => [r.method, r.path, r.query.watch]),
        [['GET', '/api/v1/namespaces/shop/secrets/db-credentials', undefined]],
      );
    });
  });

  test('get reads a ConfigMap from the configmaps path', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      const cm = await source.get('configmaps', 'shop', 'checkout-config');
      assert.equal(cm.kind, 'ConfigMap');
      assert.equal(cm.immutable, true);
      assert.deepEqual(cm.data, { LOG_LEVEL: 'info', PAYMENT_TIMEOUT: '30s' });
      assert.equal(api.requests[0]?.path, '/api/v1/namespaces/shop/configmaps/checkout-config');
    });
  });

  test('a 404 is BERTH_OBJECT_NOT_FOUND with the kubelet text', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      await assert.rejects(source.get('secrets', 'shop', 'missing'), (err) => {
        assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'), String(err));
        assert.equal(err.message, 'secret "missing" not found');
        return true;
      });
      await assert.rejects(source.get('configmaps', 'shop', 'missing'), {
        code: 'BERTH_OBJECT_NOT_FOUND',
        message: 'configmap "missing" not found',
      });
      assert.deepEqual(
        api.requests.map((r) => r.path),
        ['/api/v1/namespaces/shop/secrets/missing', '/api/v1/namespaces/shop/configmaps/missing'],
      );
    });
  });

  test('other failures are BERTH_SOURCE_FAILED carrying the Status message', async () => {
    const forbidden: Route = (_seen, res) => sendJson(res, 403, fixture('status-403.json'));
    await withSource(forbidden, async (source) => {
      await assert.rejects(source.get('secrets', 'shop', 'db-credentials'), (err) => {
        assert.ok(isBerthError(err, 'BERTH_SOURCE_FAILED'), String(err));
        assert.match(err.message, /HTTP 403/);
        assert.match(err.message, /no relationship found between node 'worker-1' and this object/);
        return true;
      });
      await assert.rejects(source.list('secrets', 'shop'), { code: 'BERTH_SOURCE_FAILED' });
    });
  });

  test('list asks for one name by fieldSelector and returns items with kind/apiVersion and the list version', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      const list = await source.list('secrets', 'shop', { name: 'db-credentials' });
      assert.equal(list.resourceVersion, '48377');
      assert.equal(list.items.length, 1);
      const item = list.items[0];
      assert.equal(item?.kind, 'Secret', 'list items come without kind; the source sets it');
      assert.equal(item?.apiVersion, 'v1');
      assert.equal(item?.metadata.resourceVersion, '48213');
      const request = api.requests[0];
      assert.equal(request?.path, '/api/v1/namespaces/shop/secrets');
      assert.equal(request?.query.fieldSelector, 'metadata.name=db-credentials');
      assert.equal(request?.query.watch, undefined);

      await source.list('secrets', 'shop');
      assert.equal(api.requests[1]?.query.fieldSelector, undefined, 'no selector without a name');
    });
  });

  test('watch sends watch=true, the version, bookmarks and the name; maps ADDED/MODIFIED/BOOKMARK/DELETED', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      const events = await collect(
        source.watch('secrets', 'shop', {
          name: 'db-credentials',
          resourceVersion: '48377',
          signal: new AbortController().signal,
        }),
      );
      const request = api.requests[0];
      assert.equal(request?.path, '/api/v1/namespaces/shop/secrets');
      assert.deepEqual(request?.query, {
        watch: 'true',
        allowWatchBookmarks: 'true',
        resourceVersion: '48377',
        fieldSelector: 'metadata.name=db-credentials',
      });
      assert.deepEqual(
        events.map((e) =>
          e.type === 'BOOKMARK'
            ? ['BOOKMARK', e.resourceVersion]
            : [e.type, e.object.metadata.resourceVersion],
        ),
        [
          ['ADDED', '48401'],
          ['MODIFIED', '48456'],
          ['BOOKMARK', '48890'],
          ['DELETED', '49012'],
        ],
      );
      const modified = events[1];
      assert.ok(modified && modified.type === 'MODIFIED');
      assert.equal(modified.object.kind, 'Secret');
      assert.equal(modified.object.data?.password, 'cm90YXRlZC1wYXNz');
    });
  });

  test('an ERROR event with code 410 is BERTH_RESOURCE_VERSION_TOO_OLD', async () => {
    const expired: Route = (_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(fixture('watch-410-error.jsonl'));
    };
    await withSource(expired, async (source, api) => {
      await assert.rejects(
        collect(
          source.watch('secrets', 'shop', { resourceVersion: '48377', signal: new AbortController().signal }),
        ),
        (err) => {
          assert.ok(isBerthError(err, 'BERTH_RESOURCE_VERSION_TOO_OLD'), String(err));
          assert.match(err.message, /too old resource version: 48377 \(51002\)/);
          return true;
        },
      );
      assert.equal(api.requests[0]?.query.fieldSelector, undefined, 'a namespace watch has no selector');
    });
  });

  test('a 410 Gone answer to the watch request is BERTH_RESOURCE_VERSION_TOO_OLD', async () => {
    const gone: Route = (_seen, res) => sendJson(res, 410, fixture('status-410.json'));
    await withSource(gone, async (source) => {
      await assert.rejects(
        collect(
          source.watch('secrets', 'shop', { resourceVersion: '1', signal: new AbortController().signal }),
        ),
        { code: 'BERTH_RESOURCE_VERSION_TOO_OLD' },
      );
    });
  });

  test('abort ends the watch and closes the HTTP request', async () => {
    // Sends the first event, then keeps the stream open as a real API server does.
    const open: Route = (_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write(`${fixture('secret-watch.jsonl').split('\n')[0]}\n`);
    };
    await withSource(open, async (source, api) => {
      const controller = new AbortController();
      const it = source
        .watch('configmaps', 'shop', { resourceVersion: '48377', signal: controller.signal })
        [Symbol.asyncIterator]();
      const first = await nextWithin(it, 'the first watch event');
      assert.equal(first.type, 'ADDED');
      assert.equal(api.requests[0]?.path, '/api/v1/namespaces/shop/configmaps');
      assert.equal(api.requests[0]?.closed, false);
      const pending = it.next();
      controller.abort();
      assert.equal((await pending).done, true);
      await waitFor('the watch request to be closed by the client', () => api.requests[0]?.closed === true);
    });
  });

  test('close ends open watches and refuses further calls', async () => {
    const open: Route = (_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write(`${fixture('secret-watch.jsonl').split('\n')[0]}\n`);
    };
    await using api = await startRecordedApi(open);
    const source = createKubernetesSource({ kubeConfig: api.kubeConfig() });
    const it = source
      .watch('secrets', 'shop', { resourceVersion: '48377', signal: new AbortController().signal })
      [Symbol.asyncIterator]();
    assert.equal((await nextWithin(it, 'first event')).type, 'ADDED');
    const pending = it.next();
    await source.stop();
    assert.equal((await pending).done, true);
    await waitFor('the watch request to be closed', () => api.requests[0]?.closed === true);
    await assert.rejects(source.get('secrets', 'shop', 'db-credentials'), { code: 'BERTH_SHUT_DOWN' });
    await source.stop();
  });

  test('a kubeconfig path is loaded; a missing or empty one is BERTH_CONFIG_INVALID', async () => {
    await using api = await startRecordedApi(recordedRoutes);
    await using dir = createTempDir();
    const path = dir.join('kubeconfig');
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: recorded\n  cluster:\n    server: ${api.url}\n    insecure-skip-tls-verify: true`,
        'users:',
        '- name: anonymous\n  user: {}',
        'contexts:',
        '- name: recorded\n  context:\n    cluster: recorded\n    user: anonymous',
        'current-context: recorded',
        '',
      ].join('\n'),
    );
    const source = createKubernetesSource({ kubeConfig: { kubeconfigPath: path } });
    try {
      assert.equal(
        (await source.get('secrets', 'shop', 'db-credentials')).metadata.uid,
        '5f0c1a9e-3b7d-4c2e-9a61-2d8e4f7b1c03',
      );
    } finally {
      await source.stop();
    }
    assert.throws(() => createKubernetesSource({ kubeConfig: { kubeconfigPath: dir.join('absent') } }), {
      code: 'BERTH_CONFIG_INVALID',
      message: /absent/,
    });
    const empty = dir.join('empty');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
    assert.throws(() => createKubernetesSource({ kubeConfig: { kubeconfigPath: empty } }), {
      code: 'BERTH_CONFIG_INVALID',
    });
  });

  test('bad arguments are rejected before any request', async () => {
    await withSource(recordedRoutes, async (source, api) => {
      await assert.rejects(source.get('pods' as 'secrets', 'shop', 'x'), { code: 'BERTH_INVALID_ARGUMENT' });
      await assert.rejects(source.get('secrets', '', 'x'), { code: 'BERTH_INVALID_ARGUMENT' });
      await assert.rejects(source.list('secrets', 'shop', { name: '' }), { code: 'BERTH_INVALID_ARGUMENT' });
      assert.equal(api.requests.length, 0);
    });
  });
});
