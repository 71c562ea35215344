import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError } from '../../common/index.js';
import { httpStatusFor, toApiError } from './http-errors.js';

describe('API error mapping', () => {
  it('gives each object-manager and registry error a fitting status', () => {
    assert.equal(httpStatusFor('BERTH_OBJECT_NOT_REGISTERED'), 404);
    assert.equal(httpStatusFor('BERTH_OBJECT_NOT_FOUND'), 404);
    assert.equal(httpStatusFor('BERTH_CACHE_SYNC_TIMEOUT'), 503);
    assert.equal(httpStatusFor('BERTH_INVALID_ARGUMENT'), 400);
    assert.equal(httpStatusFor('BERTH_PLUGIN_NOT_FOUND'), 404);
    assert.equal(httpStatusFor('BERTH_PAYLOAD_TOO_LARGE'), 413);
    assert.equal(httpStatusFor('BERTH_SOURCE_FAILED'), 502);
    assert.equal(httpStatusFor('BERTH_INTERNAL'), 500);
  });

  it('keeps BerthErrors and turns framework errors into berth codes', () => {
    const own = new BerthError('BERTH_OBJECT_NOT_FOUND', 'secret "x" not found');
    assert.equal(toApiError(own, 10), own);
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    assert.equal(toApiError(tooLarge, 1024).code, 'BERTH_PAYLOAD_TOO_LARGE');
    assert.match(toApiError(tooLarge, 1024).message, /1024 bytes/);
    const badJson = Object.assign(new Error('Body is not valid JSON'), {
      statusCode: 400,
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    });
    assert.equal(toApiError(badJson, 1).code, 'BERTH_BAD_REQUEST');
    const media = Object.assign(new Error('Unsupported Media Type'), {
      statusCode: 415,
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    });
    assert.match(toApiError(media, 1).message, /application\/json/);
    assert.equal(toApiError(new TypeError('oops'), 1).code, 'BERTH_INTERNAL');
  });
});
