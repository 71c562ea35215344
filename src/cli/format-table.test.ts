import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTable, relativeTime } from './format-table.js';
import { tableWidth } from './output.js';

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

  it('fits a terminal: the widest cells are cut with an ellipsis, never below their header', () => {
    const error = `dial failed: ${'x'.repeat(200)}`;
    const rows = [
      ['/p/a.sock', 'failed', error],
      ['/p/b.sock', 'registered', '-'],
    ];
    const fitted = formatTable(['SOCKET', 'STATE', 'LAST ERROR'], rows, 60);
    for (const line of fitted.split('\n')) assert.ok(line.length <= 60, `${line.length}: ${line}`);
    assert.match(fitted, /^SOCKET\s+STATE\s+LAST ERROR$/m);
    assert.match(fitted, /\/p\/a\.sock\s+failed\s+dial failed: x+…$/m);
    assert.match(fitted, /\/p\/b\.sock\s+registered\s+-$/m, 'short cells are untouched');
    // Without a width (a pipe, -o wide) every cell is printed in full.
    assert.ok(formatTable(['SOCKET', 'STATE', 'LAST ERROR'], rows).includes(error));
    // Too narrow for the headers: columns keep their floor rather than vanish.
    const narrow = formatTable(['SOCKET', 'STATE', 'LAST ERROR'], rows, 10);
    assert.match(narrow, /^SOCKET\s+STATE\s+LAST ERROR$/m);
  });

  it('truncates only for a terminal table, to its width', () => {
    assert.equal(tableWidth('table', { isTTY: true, columns: 90 }), 90);
    assert.equal(tableWidth('wide', { isTTY: true, columns: 90 }), undefined);
    assert.equal(tableWidth('table', { isTTY: false, columns: 90 }), undefined);
    assert.equal(tableWidth('table', {}), undefined);
  });

  it('gives relative times for table cells', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(relativeTime(new Date(now + 4000).toISOString(), now), 'in 4s');
    assert.equal(relativeTime(new Date(now - 120_000).toISOString(), now), '2m ago');
    assert.equal(relativeTime(new Date(now - 7_200_000).toISOString(), now), '2h ago');
    assert.equal(relativeTime(null, now), '-');
  });
});
