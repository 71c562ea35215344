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

describe('BerthError.from', () => {
  it('returns a BerthError unchanged, whatever the fallback', () => {
    const original = new BerthError('BERTH_DIAL_FAILED', 'dial failed');
    assert.equal(BerthError.from(original, 'BERTH_INTERNAL', 'context'), original);
  });

  it('wraps anything else with the fallback code, the cause and an optional message prefix', () => {
    const cause = new Error('ECONNREFUSED');
    const plain = BerthError.from(cause, 'BERTH_SOURCE_FAILED');
    assert.equal(plain.code, 'BERTH_SOURCE_FAILED');
    assert.equal(plain.message, 'ECONNREFUSED');
    assert.equal(plain.cause, cause);
    const prefixed = BerthError.from(cause, 'BERTH_DIAL_FAILED', 'dial /x.sock failed');
    assert.equal(prefixed.message, 'dial /x.sock failed: ECONNREFUSED');
    const detailed = BerthError.from('a string', 'BERTH_GET_INFO_FAILED', {
      message: 'GetInfo failed',
      details: { grpcCode: 14 },
    });
    assert.equal(detailed.message, 'GetInfo failed: a string');
    assert.deepEqual(detailed.details, { grpcCode: 14 });
    assert.equal(detailed.cause, 'a string');
  });

  it('maps an AbortError to BERTH_ABORTED whatever the fallback (DOMException, Node, a signal reason)', async () => {
    const signal = AbortSignal.abort();
    const timers = await import('node:timers/promises');
    const fromTimer = await timers.setTimeout(1, undefined, { signal }).catch((err: unknown) => err);
    for (const cause of [new DOMException('stopped', 'AbortError'), signal.reason, fromTimer]) {
      const mapped = BerthError.from(cause, 'BERTH_DIAL_FAILED', 'dial /x.sock');
      assert.equal(mapped.code, 'BERTH_ABORTED', String(cause));
      assert.equal(mapped.cause, cause);
    }
    assert.equal(BerthError.from(new Error('aborted?'), 'BERTH_DIAL_FAILED').code, 'BERTH_DIAL_FAILED');
  });
});

describe('BerthError across two loaded copies of berth', () => {
  it('isBerthError, instanceof and BerthError.from recognise an error of the other copy', async () => {
    // A query string makes Node load the module a second time: a distinct class, as with two installs.
    const other = (await import(`./errors.js?second-copy=${Date.now()}`)) as typeof import('./errors.js');
    assert.notEqual(other.BerthError, BerthError);
    const foreign = new other.BerthError('BERTH_NO_HANDLER', 'no handler for type X');
    assert.ok(isBerthError(foreign, 'BERTH_NO_HANDLER'));
    assert.ok(foreign instanceof BerthError);
    assert.equal(errorCode(foreign), 'BERTH_NO_HANDLER');
    assert.equal(BerthError.from(foreign, 'BERTH_INTERNAL'), foreign);
    const ours = new BerthError('BERTH_ABORTED', 'aborted');
    assert.ok(other.isBerthError(ours, 'BERTH_ABORTED'));
  });

  it('a look-alike without the brand is not a BerthError', () => {
    const lookalike = Object.assign(new Error('x'), { name: 'BerthError', code: 'BERTH_INTERNAL' });
    assert.ok(!isBerthError(lookalike));
    assert.ok(!(lookalike instanceof BerthError));
    assert.equal(errorCode(lookalike), 'BERTH_INTERNAL');
  });

  it('subclasses keep their own instanceof', () => {
    class SpecialError extends BerthError {}
    const special = new SpecialError('BERTH_INTERNAL', 'special');
    assert.ok(special instanceof SpecialError);
    assert.ok(special instanceof BerthError);
    assert.ok(!(new BerthError('BERTH_INTERNAL', 'plain') instanceof SpecialError));
  });
});
