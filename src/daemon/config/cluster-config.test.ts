import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';

const parse = (document: unknown) => parseConfigDocument(document, '/etc/berth.yaml');
const rejects = (document: unknown, text: string) =>
  assert.throws(
    () => parse(document),
    (err) => isBerthError(err, 'BERTH_CONFIG_INVALID') && err.message.includes(text),
    text,
  );

describe('cluster: config section', () => {
  it('is off unless present', () => {
    assert.equal(resolveDaemonConfig({}, { dataDir: '/d' }, { env: {} }).cluster, undefined);
  });

  it('resolves defaults, the node name from BERTH_NODE_NAME, and TLS paths relative to the file', () => {
    const file = parse({
      cluster: {
        etcd: {
          endpoints: ['https://etcd-1:2379', 'https://etcd-2:2379'],
          tls: { ca: 'pki/ca.pem', cert: 'pki/node.pem', key: '/abs/node-key.pem' },
          auth: { username: 'berth', password: 's3cret' },
        },
        leaseTtl: '20s',
      },
    });
    const config = resolveDaemonConfig(
      file,
      { dataDir: '/d', config: '/etc/berth/berth.yaml' },
      { env: { BERTH_NODE_NAME: 'rack1-n7' } },
    );
    assert.deepEqual(config.cluster, {
      etcd: {
        endpoints: ['https://etcd-1:2379', 'https://etcd-2:2379'],
        tls: { ca: '/etc/berth/pki/ca.pem', cert: '/etc/berth/pki/node.pem', key: '/abs/node-key.pem' },
        auth: { username: 'berth', password: 's3cret' },
      },
      nodeName: 'rack1-n7',
      prefix: '/berth/v1/',
      leaseTtlSeconds: 20,
      onShutdown: 'revoke',
      reader: true,
      probeIntervalMs: 10_000,
      progressTimeoutMs: 15_000,
      instanceFile: '/d/cluster-instance',
    });
  });

  it('names what is wrong', () => {
    rejects({ cluster: {} }, 'cluster.etcd');
    rejects({ cluster: { etcd: { endpoints: [] } } }, 'cluster.etcd.endpoints: expected at least one URL');
    rejects(
      { cluster: { etcd: { endpoints: ['http://e:2379'] }, leaseTtl: '1s' } },
      "at least 2 (etcd's minimum lease TTL)",
    );
    rejects({ cluster: { etcd: { endpoints: ['http://e:2379'] }, leaseTtl: '2500ms' } }, 'whole seconds');
    rejects(
      { cluster: { etcd: { endpoints: ['http://e:2379'], tls: { ca: 'a', cert: 'c' } } } },
      'cluster.etcd.tls.key: cert and key go together',
    );
    rejects(
      { cluster: { etcd: { endpoints: ['http://e:2379'] }, prefix: 'berth' } },
      'cluster.prefix: must start with "/"',
    );
    rejects(
      { cluster: { etcd: { endpoints: ['http://e:2379'] }, onShutdown: 'keep' } },
      'expected one of revoke|release',
    );
    rejects(
      { cluster: { etcd: { endpoints: ['http://e:2379'] }, nodname: 'x' } },
      'cluster.nodname: unknown key',
    );
  });

  it('lets an etcd object source carry TLS and auth too', () => {
    const file = parse({
      objects: {
        source: { type: 'etcd', endpoints: ['https://e:2379'], auth: { username: 'u', password: 'p' } },
      },
    });
    const config = resolveDaemonConfig(file, { dataDir: '/d' }, { env: {} });
    assert.deepEqual(config.objects.source, {
      type: 'etcd',
      endpoints: ['https://e:2379'],
      auth: { username: 'u', password: 'p' },
    });
    assert.throws(
      () => parse({ objects: { source: { type: 'directory', auth: { username: 'u', password: 'p' } } } }),
      /objects\.source\.auth: not used by a directory source/,
    );
  });

  it("an etcd object source without endpoints shares the cluster view's connection (endpoints, TLS, user)", () => {
    const file = parse({
      cluster: {
        etcd: {
          endpoints: ['https://etcd-1:2379'],
          tls: { ca: 'pki/ca.pem' },
          auth: { username: 'berth', password: 's3cret' },
        },
      },
      objects: { source: { type: 'etcd', prefix: '/objects/' } },
    });
    const config = resolveDaemonConfig(file, { dataDir: '/d', config: '/etc/berth/berth.yaml' }, { env: {} });
    assert.deepEqual(config.objects.source, {
      type: 'etcd',
      prefix: '/objects/',
      endpoints: ['https://etcd-1:2379'],
      tls: { ca: '/etc/berth/pki/ca.pem' },
      auth: { username: 'berth', password: 's3cret' },
    });
    // Its own endpoints win, and it keeps its own (absent) TLS.
    const own = resolveDaemonConfig(
      parse({
        cluster: { etcd: { endpoints: ['https://etcd-1:2379'], tls: { ca: '/ca.pem' } } },
        objects: { source: { type: 'etcd', endpoints: ['http://objects:2379'] } },
      }),
      { dataDir: '/d' },
      { env: {} },
    );
    assert.deepEqual(own.objects.source, { type: 'etcd', endpoints: ['http://objects:2379'] });
    // Without a cluster section there is nothing to share.
    rejects({ objects: { source: 'etcd' } }, 'objects.source.endpoints: required for an etcd source');
    rejects(
      {
        cluster: { etcd: { endpoints: ['http://e:2379'] } },
        objects: { source: { type: 'etcd', auth: { username: 'u', password: 'p' } } },
      },
      'tls and auth go with endpoints',
    );
  });
});
