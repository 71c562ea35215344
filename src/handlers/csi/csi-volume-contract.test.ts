import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CSI_ACCESS_MODES } from './csi-volume-contract.js';
import { VolumeCapability_AccessMode_Mode } from './gen/csi/v1/csi_pb.js';

test("the access modes' written-out numbers are csi.proto's AccessMode.Mode values, every mode but UNKNOWN", () => {
  const expected = Object.entries(VolumeCapability_AccessMode_Mode)
    .filter(([name, value]) => typeof value === 'number' && name !== 'UNKNOWN')
    .map(([name, value]) => [name.toLowerCase().replaceAll('_', '-'), value]);
  assert.equal(expected.length, 7);
  assert.deepEqual(Object.entries(CSI_ACCESS_MODES).sort(), expected.sort());
});
