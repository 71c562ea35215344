import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BerthError, ERROR_CODES, errorCode, isBerthError } from './errors.js';

// Compiled tests live in dist/src/common; under tsx they live in src/common.
const repoRoot = new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url);

function documentedCodes(file: string): Set<string> {
  const text = readFileSync(new URL(file, repoRoot), 'utf8');
  return new Set([...text.matchAll(/`(BERTH_[A-Z_]+)`/g)].map((m) => m[1] as string));
}

describe('BerthError', () => {
  it('carries a code, a message and a cause', () => {
    const cause = new Error('boom');
    const err = new BerthError('BERTH_DIAL_FAILED', 'dial failed', { cause });
    assert.equal(err.code, 'BERTH_DIAL_FAILED');
    assert.equal(err.message, 'dial failed');
    assert.equal(err.cause, cause);
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'));
    assert.ok(!isBerthError(err, 'BERTH_NO_HANDLER'));
    assert.equal(errorCode(new Error('x')), 'BERTH_INTERNAL');
    assert.deepEqual(JSON.parse(JSON.stringify(err)), { code: 'BERTH_DIAL_FAILED', message: 'dial failed' });
  });

  // The code table is the contract users script against: its docs may not drift from the code.
  for (const file of ['docs/errors.md', 'README.md']) {
    it(`${file} lists exactly the codes in ERROR_CODES`, () => {
      const documented = documentedCodes(file);
      const defined = new Set(Object.keys(ERROR_CODES));
      assert.deepEqual(
        [...defined].filter((c) => !documented.has(c)),
        [],
        `codes missing from ${file}`,
      );
      assert.deepEqual(
        [...documented].filter((c) => !defined.has(c)),
        [],
        `codes in ${file} that do not exist`,
      );
    });
  }
});
