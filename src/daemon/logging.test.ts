import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topLevelJsonKeys } from '../testing/harness/index.js';
import { createDaemonLogger } from './logging.js';
import { formatTextLine } from './text-log-format.js';

function recorder() {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => lines.push(line) } };
}

describe('daemon logger', () => {
  it('writes JSON with a string level, an ISO-8601 time and each key once', () => {
    const { lines, destination } = recorder();
    const logger = createDaemonLogger({ level: 'info', format: 'json', destination });
    const writer = logger.child({ component: 'cluster' }).child({ component: 'cluster-writer' });
    writer.info({ nodes: 3 }, 'published');
    writer.warn({ component: 'override', err: new Error('boom') }, 'failed');
    assert.equal(lines.length, 2);
    const first = JSON.parse(lines[0] as string) as Record<string, unknown>;
    assert.equal(first.level, 'info');
    assert.match(String(first.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(first.component, 'cluster-writer');
    assert.equal(first.msg, 'published');
    for (const line of lines) {
      const keys = topLevelJsonKeys(line);
      assert.deepEqual(keys, [...new Set(keys)], line);
    }
    const second = JSON.parse(lines[1] as string) as { component: string; err: { message: string } };
    assert.equal(second.component, 'override');
    assert.equal(second.err.message, 'boom');
  });

  it('filters by level, and a level change reaches children made before it', () => {
    const { lines, destination } = recorder();
    const logger = createDaemonLogger({ level: 'info', format: 'json', destination });
    const child = logger.child({ component: 'x' });
    child.debug('hidden');
    assert.equal(lines.length, 0);
    logger.setLevel('debug');
    assert.equal(logger.level, 'debug');
    child.debug('shown');
    assert.equal(lines.length, 1);
    logger.setLevel('silent');
    child.error('hidden too');
    assert.equal(lines.length, 1);
  });

  it('text: one readable line per event', () => {
    const { lines, destination } = recorder();
    const logger = createDaemonLogger({ level: 'info', format: 'text', destination });
    logger
      .child({ component: 'plugin-manager' })
      .warn(
        { socketPath: '/p/a b.sock', attempts: 2, err: new Error('line one\nline two') },
        'registration failed',
      );
    assert.equal(lines.length, 1);
    const line = lines[0] as string;
    assert.match(
      line,
      /^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}plugin-manager: registration failed socketPath="\/p\/a b\.sock" attempts=2 err="line one\\nline two"\n$/,
    );
    assert.equal(line.split('\n').length, 2);
  });

  it('text: a line that is not JSON passes through', () => {
    assert.equal(formatTextLine('not json\n'), 'not json');
  });
});
