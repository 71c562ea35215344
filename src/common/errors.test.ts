import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BerthError, ERROR_CODES, errorCode, isBerthError } from './errors.js';

const docsUrl = new URL('../../../docs/errors.md', import.meta.url);
// Compiled tests live in dist/src/common; under tsx they live in src/common.
const docsPath = import.meta.url.includes('/dist/')
  ? docsUrl
  : new URL('../../docs/errors.md', import.meta.url);

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

  it('docs/errors.md lists exactly the codes in ERROR_CODES', () => {
    const docs = readFileSync(docsPath, 'utf8');
    const documented = new Set([...docs.matchAll(/`(BERTH_[A-Z_]+)`/g)].map((m) => m[1]));
    const defined = new Set(Object.keys(ERROR_CODES));
    assert.deepEqual(
      [...defined].filter((c) => !documented.has(c)),
      [],
      'codes missing from docs/errors.md',
    );
    assert.deepEqual(
      [...documented].filter((c) => !defined.has(c as string)),
      [],
      'documented codes that do not exist',
    );
  });
});
