import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { create, toBinary } from '@bufbuild/protobuf';
import { PluginInfoSchema } from './gen/pluginregistration/api_pb.js';
import { PLUGIN_INFO_LIMITS, pluginInfoProblem } from './plugin-info-bounds.js';
import { decodePluginInfo } from './plugin-info-decode.js';

const info = (
  over: Partial<{ name: string; type: string; endpoint: string; supportedVersions: string[] }>,
) => ({
  name: 'example.com/dev',
  type: 'DevicePlugin',
  endpoint: '',
  supportedVersions: ['v1beta1'],
  ...over,
});

describe('plugin info bounds', () => {
  it('accepts what real kubelet plugins send', () => {
    const real = [
      info({
        type: 'CSIPlugin',
        name: 'ebs.csi.aws.com',
        endpoint: '/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock',
        supportedVersions: ['1.0.0'],
      }),
      info({
        type: 'DevicePlugin',
        name: 'nvidia.com/gpu',
        endpoint: 'nvidia-gpu.sock',
        supportedVersions: ['v1beta1'],
      }),
      info({
        type: 'DRAPlugin',
        name: 'gpu.resource.example.com',
        endpoint: '/var/lib/kubelet/plugins/gpu.resource.example.com/dra.sock',
        supportedVersions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'],
      }),
      info({
        type: 'example.com/berth-example',
        name: 'my-plugin_1',
        supportedVersions: ['v1beta1', 'v1beta2'],
      }),
      info({ name: `${'a'.repeat(253)}/${'b'.repeat(63)}` }),
      info({ name: 'plugin-ünïcode-名前' }),
    ];
    for (const candidate of real) assert.equal(pluginInfoProblem(candidate), undefined, candidate.name);
  });

  it('names the field and the limit it breaks', () => {
    const cases: Array<[ReturnType<typeof info>, RegExp]> = [
      [info({ name: 'n'.repeat(513) }), /^name is 513 bytes, more than the limit of 512$/],
      [info({ type: 't'.repeat(257) }), /^type is 257 bytes, more than the limit of 256$/],
      [info({ endpoint: `/${'e'.repeat(4096)}` }), /^endpoint is 4097 bytes, more than the limit of 4096$/],
      [
        info({ supportedVersions: Array.from({ length: 33 }, (_, i) => `v${i}`) }),
        /^supported_versions has 33 entries/,
      ],
      [info({ supportedVersions: ['v1', 'x'.repeat(129)] }), /^supported_versions\[1\] is 129 bytes/],
      [
        info({ endpoint: '/tmp/a\u0000b' }),
        /^endpoint "\/tmp\/a\\u0000b" contains the control character U\+0000$/,
      ],
      [info({ name: 'line\nbreak' }), /^name .* contains the control character U\+000a$/],
      [info({ name: 'c1\u0085' }), /U\+0085/],
      [info({ name: 'lone\ud800' }), /^name .* is not valid Unicode$/],
    ];
    for (const [candidate, expected] of cases) assert.match(pluginInfoProblem(candidate) ?? '', expected);
  });

  it('clips what it quotes, so a huge value never travels on in a message', () => {
    const problem = pluginInfoProblem(info({ name: `bad\u0001${'x'.repeat(400)}` })) ?? '';
    assert.ok(problem.length < 120, problem);
  });

  it('checks the raw bytes: invalid UTF-8 in any string field is refused, valid bytes pass', () => {
    const good = toBinary(PluginInfoSchema, create(PluginInfoSchema, info({ name: 'ünï' })));
    assert.doesNotThrow(() => decodePluginInfo(good));
    const type = Buffer.from('DevicePlugin');
    for (const [field, name] of [
      [0x12, 'name'],
      [0x1a, 'endpoint'],
      [0x22, 'supported_versions'],
    ] as const) {
      const bytes = Buffer.concat([
        Buffer.from([0x0a, type.length]),
        type,
        Buffer.from([field, 2, 0xc3, 0x28]),
      ]);
      assert.throws(() => decodePluginInfo(bytes), new RegExp(`field ${name} is not valid UTF-8`));
    }
    // Unknown fields are skipped, not checked.
    assert.doesNotThrow(() => decodePluginInfo(Buffer.from([0x2a, 2, 0xff, 0xfe])));
    assert.throws(
      () => decodePluginInfo(new Uint8Array(PLUGIN_INFO_LIMITS.messageBytes + 1)),
      /GetInfo reply is 65537 bytes, more than 65536/,
    );
  });
});
