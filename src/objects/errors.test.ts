import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cacheSyncTimeoutError,
  notFoundError,
  notRegisteredError,
  objectOfNotFound,
  unknownStrategyError,
} from './errors.js';

test('error texts match the kubelet byte for byte', () => {
  assert.equal(notRegisteredError('ns1', 's1').message, 'object "ns1"/"s1" not registered');
  assert.equal(notRegisteredError('ns1', 's1').code, 'BERTH_OBJECT_NOT_REGISTERED');
  assert.equal(
    cacheSyncTimeoutError('configmap').message,
    'failed to sync configmap cache: timed out waiting for the condition',
  );
  assert.equal(notFoundError('secret', 'name').message, 'secret "name" not found');
  assert.equal(unknownStrategyError('Poll').message, 'unknown configmap and secret manager mode: Poll');
});

test('a NotFound can carry the object the source returned', () => {
  const empty = { metadata: { name: '' } };
  assert.deepEqual(objectOfNotFound(notFoundError('secret', 'x', empty)), empty);
  assert.equal(objectOfNotFound(notFoundError('secret', 'x')), undefined);
  assert.equal(objectOfNotFound(new Error('x')), undefined);
});
