import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHostPort, parseHostPort } from './listen-address.js';

describe('HOST:PORT', () => {
  it('parses hosts, IPv6 in brackets, and port 0', () => {
    assert.deepEqual(parseHostPort('127.0.0.1:7878'), { host: '127.0.0.1', port: 7878 });
    assert.deepEqual(parseHostPort('localhost:0'), { host: 'localhost', port: 0 });
    assert.deepEqual(parseHostPort('[::1]:80'), { host: '::1', port: 80 });
    assert.equal(formatHostPort({ host: '::1', port: 80 }), '[::1]:80');
  });

  it('rejects anything else', () => {
    for (const bad of [
      '',
      'localhost',
      ':80',
      'host:',
      'host:99999',
      '::1:80',
      'host:port',
      '/tmp/berth.sock',
    ]) {
      assert.equal(parseHostPort(bad), undefined, bad);
    }
  });
});
