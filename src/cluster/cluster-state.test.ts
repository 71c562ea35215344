import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterKeys } from './cluster-keys.js';
import { ClusterState, type RawKey, replayEvents } from './cluster-state.js';
import { encodeRecord } from './cluster-values.js';

const keys = clusterKeys('/b/');
const node = (name: string, lease: string, rev: string): RawKey => ({
  key: keys.nodeKey(name),
  value: encodeRecord({ node: name, instance: `i-${name}`, lease, startedAt: 1, daemon: 't' }),
  modRevision: rev,
  lease,
});
const plugin = (n: string, p: string, lease: string, rev: string, health = 'healthy'): RawKey => ({
  key: keys.pluginKey(n, 'CSIPlugin', p, `/s/${p}`),
  value: encodeRecord({
    node: n,
    type: 'CSIPlugin',
    name: p,
    versions: ['1'],
    endpoint: `/s/${p}`,
    instanceId: `/s/${p}`,
    health: { state: health },
    facts: {},
  }),
  modRevision: rev,
  lease,
});
const types = (events: Array<{ type: string }>) => events.map((e) => e.type);

describe('ClusterState', () => {
  it('shows a plugin only while its node key exists, nodes first in and last out', () => {
    const state = new ClusterState(keys);
    assert.deepEqual(types(state.applyChanges([{ kind: 'put', kv: plugin('a', 'p', '7', '2') }], '2')), []);
    assert.deepEqual(types(state.applyChanges([{ kind: 'put', kv: node('a', '7', '3') }], '3')), [
      'node-added',
      'plugin-added',
    ]);
    const gone = state.applyChanges(
      [
        { kind: 'delete', key: keys.nodeKey('a'), modRevision: '4' },
        { kind: 'delete', key: plugin('a', 'p', '7', '2').key, modRevision: '4' },
      ],
      '4',
    );
    assert.deepEqual(types(gone), ['plugin-removed', 'node-removed']);
    assert.equal(state.size, 0);
  });

  it('reports nothing for a same-value re-put on another lease (adoption), and ignores stale events', () => {
    const state = new ClusterState(keys);
    state.replaceAll([node('a', '7', '2'), plugin('a', 'p', '7', '2')], '2');
    assert.deepEqual(types(state.applyChanges([{ kind: 'put', kv: plugin('a', 'p', '8', '3') }], '3')), []);
    assert.equal(state.plugins()[0]?.lease, '8');
    assert.deepEqual(
      types(state.applyChanges([{ kind: 'put', kv: plugin('a', 'p', '7', '3', 'unhealthy') }], '3')),
      [],
    );
    assert.deepEqual(
      types(state.applyChanges([{ kind: 'put', kv: plugin('a', 'p', '8', '5', 'unhealthy') }], '5')),
      ['plugin-updated'],
    );
    assert.deepEqual(
      types(
        state.applyChanges([{ kind: 'delete', key: plugin('a', 'p', '8', '5').key, modRevision: '4' }], '4'),
      ),
      [],
    );
    assert.equal(state.plugins().length, 1);
  });

  it('a re-list emits only the differences, and replaying the events gives the view', () => {
    const state = new ClusterState(keys);
    const log = [
      ...state.replaceAll([node('a', '7', '2'), plugin('a', 'p', '7', '2'), plugin('a', 'q', '7', '2')], '2'),
    ];
    const diff = state.replaceAll(
      [node('a', '7', '2'), plugin('a', 'p', '7', '2'), plugin('a', 'r', '7', '9'), node('b', '9', '9')],
      '9',
    );
    assert.deepEqual(types(diff).sort(), ['node-added', 'plugin-added', 'plugin-removed']);
    log.push(...diff);
    const replayed = replayEvents(log);
    assert.deepEqual(
      [...replayed.plugins.keys()].sort(),
      state
        .plugins()
        .map((p) => p.key)
        .sort(),
    );
    assert.deepEqual(
      [...replayed.nodes.keys()].sort(),
      state
        .nodes()
        .map((n) => n.key)
        .sort(),
    );
  });
});
