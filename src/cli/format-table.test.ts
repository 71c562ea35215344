import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTable, relativeTime } from './format-table.js';

describe('table formatting', () => {
  it('aligns columns by their widest cell and leaves no trailing blanks', () => {
    const text = formatTable(
      ['TYPE', 'NAME', 'NOTE'],
      [
        ['CSIPlugin', 'ebs.csi.aws.com', ''],
        ['DRAPlugin', 'gpu', 'two words'],
      ],
    );
    assert.equal(
      text,
      [
        'TYPE       NAME             NOTE',
        'CSIPlugin  ebs.csi.aws.com',
        'DRAPlugin  gpu              two words',
      ].join('\n'),
    );
  });

  it('prints only the header for no rows, and tolerates short rows', () => {
    assert.equal(formatTable(['A', 'B'], []), 'A  B');
    assert.equal(formatTable(['A', 'B'], [['x']]), 'A  B\nx');
  });

  it('gives relative times for table cells', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(relativeTime(new Date(now + 4000).toISOString(), now), 'in 4s');
    assert.equal(relativeTime(new Date(now - 120_000).toISOString(), now), '2m ago');
    assert.equal(relativeTime(new Date(now - 7_200_000).toISOString(), now), '2h ago');
    assert.equal(relativeTime(null, now), '-');
  });
});
