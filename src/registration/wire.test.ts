import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exampleV1beta1Methods, exampleV1beta2Methods, registrationMethods } from './wire.js';

test('method paths are the exact kubelet and example API paths', () => {
  assert.equal(registrationMethods.getInfo.path, '/pluginregistration.Registration/GetInfo');
  assert.equal(
    registrationMethods.notifyRegistrationStatus.path,
    '/pluginregistration.Registration/NotifyRegistrationStatus',
  );
  assert.equal(exampleV1beta1Methods.getExampleInfo.path, '/v1beta1.Example/GetExampleInfo');
  assert.equal(exampleV1beta2Methods.getExampleInfo.path, '/v1beta2.Example/GetExampleInfo');
});

test('PluginInfo and RegistrationStatus encode to the proto3 wire bytes', () => {
  const { getInfo, notifyRegistrationStatus } = registrationMethods;
  const bytes = getInfo.responseSerialize({
    $typeName: 'pluginregistration.PluginInfo',
    type: 'T',
    name: 'n',
    endpoint: '',
    supportedVersions: ['a', 'b'],
  });
  // field 1 "T", field 2 "n", (empty endpoint omitted), field 4 "a", field 4 "b"
  assert.deepEqual([...bytes], [0x0a, 1, 0x54, 0x12, 1, 0x6e, 0x22, 1, 0x61, 0x22, 1, 0x62]);
  const decoded = getInfo.responseDeserialize(bytes);
  assert.deepEqual(decoded.supportedVersions, ['a', 'b']);

  const status = notifyRegistrationStatus.requestSerialize({
    $typeName: 'pluginregistration.RegistrationStatus',
    pluginRegistered: true,
    error: 'x',
  });
  assert.deepEqual([...status], [0x08, 1, 0x12, 1, 0x78]);
  assert.equal(notifyRegistrationStatus.requestDeserialize(Buffer.from([0x08, 0x01])).pluginRegistered, true);
});
