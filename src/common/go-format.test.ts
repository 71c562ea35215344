import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goQuote } from './go-format.js';

test('goQuote quotes like Go %q', () => {
  assert.equal(goQuote('plain'), '"plain"');
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('tab\there\nnl'), '"tab\\there\\nnl"');
  assert.equal(goQuote('\u0001\u007f'), '"\\x01\\x7f"');
  assert.equal(goQuote('héllo ✓'), '"héllo ✓"');
  assert.equal(goQuote(''), '""');
});
