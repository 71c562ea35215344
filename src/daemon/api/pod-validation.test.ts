import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { validatePodDocument } from './pod-validation.js';

function rejection(body: unknown): string {
  try {
    validatePodDocument(body, 'ns1', 'web');
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_BAD_REQUEST'));
    return err.message;
  }
  assert.fail('expected a rejection');
}

describe('pod validation', () => {
  it('fills the namespace and name from the path', () => {
    const pod = validatePodDocument({ metadata: { uid: 'u1' }, spec: { containers: [] } }, 'ns1', 'web');
    assert.deepEqual(pod.metadata, { uid: 'u1', name: 'web', namespace: 'ns1' });
  });

  it('names the field that is wrong', () => {
    assert.match(rejection(null), /^body: /);
    assert.match(rejection({}), /^metadata: /);
    assert.match(rejection({ metadata: { uid: '' } }), /^metadata\.uid: /);
    assert.match(rejection({ metadata: { uid: 'u', name: 'api' } }), /^metadata\.name: "api" does not match/);
    assert.match(rejection({ metadata: { uid: 'u', namespace: 'other' } }), /^metadata\.namespace: /);
    assert.match(rejection({ metadata: { uid: 'u' }, spec: 'x' }), /^spec: /);
    assert.match(
      rejection({ metadata: { uid: 'u' }, spec: { volumes: 3 } }),
      /^spec\.volumes: expected a list/,
    );
    assert.match(rejection({ kind: 'Secret', metadata: { uid: 'u' } }), /^kind: /);
  });
});
