import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareGenericVersions, highestSupportedVersion, parseGenericVersion } from './generic-version.js';

test('parseGenericVersion follows the apimachinery generic rules', () => {
  assert.equal(parseGenericVersion('1.0.0').toString(), '1.0.0');
  assert.equal(parseGenericVersion('v1.2').toString(), '1.2');
  assert.equal(parseGenericVersion(' v1.10.3-beta+x ').toString(), '1.10.3');
  assert.throws(() => parseGenericVersion('1'), { message: 'illegal version string "1"' });
  assert.throws(() => parseGenericVersion('v1beta1'), { message: 'illegal version string "v1beta1"' });
  assert.throws(() => parseGenericVersion('abc'), { message: 'could not parse "abc" as version' });
  assert.throws(() => parseGenericVersion('01.2'), {
    message: 'illegal zero-prefixed version component "01" in "01.2"',
  });
  assert.equal(
    parseGenericVersion('1.02').toString(),
    '1.2',
    'only the first component rejects leading zeros',
  );
});

test('compareGenericVersions treats missing components as zero', () => {
  assert.equal(compareGenericVersions(parseGenericVersion('1.4'), parseGenericVersion('1.4.0')), 0);
  assert.equal(compareGenericVersions(parseGenericVersion('1.4'), parseGenericVersion('1.4.1')), -1);
  assert.equal(compareGenericVersions(parseGenericVersion('1.10'), parseGenericVersion('1.9')), 1);
});

test('highestSupportedVersion picks the highest 1.x and ignores 2.x and junk', () => {
  assert.equal(highestSupportedVersion(['0.3.0', '1.0.0', '1.2.0', '2.0.0', 'junk']).toString(), '1.2.0');
  assert.equal(highestSupportedVersion(['v1.0.0']).toString(), '1.0.0');
  assert.throws(() => highestSupportedVersion(['0.3.0', '0.2.0']), {
    message: 'highest supported version reported is 0.3.0, must be v1.x',
  });
  assert.throws(() => highestSupportedVersion(['2.0.0']), {
    message: 'could not find a highest supported version from versions ([2.0.0]) reported: <nil>',
  });
  assert.throws(() => highestSupportedVersion(['x', '3']), {
    message:
      'could not find a highest supported version from versions ([x 3]) reported: could not parse "x" as version',
  });
  assert.throws(() => highestSupportedVersion([]), { message: 'empty array for supported versions' });
});
