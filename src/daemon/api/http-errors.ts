import { BerthError, type BerthErrorCode, errorMessage, isBerthError } from '../../common/index.js';
import type { ErrorBody } from './wire-types.js';

/** The HTTP status for each error code the API can return; anything else is a 500. */
const STATUS_BY_CODE: Partial<Record<BerthErrorCode, number>> = {
  BERTH_INVALID_ARGUMENT: 400,
  BERTH_BAD_REQUEST: 400,
  BERTH_NOT_FOUND: 404,
  BERTH_PLUGIN_NOT_FOUND: 404,
  BERTH_NO_PLUGINS_FOR_TYPE: 404,
  BERTH_OBJECT_NOT_REGISTERED: 404,
  BERTH_OBJECT_NOT_FOUND: 404,
  BERTH_PAYLOAD_TOO_LARGE: 413,
  BERTH_LIMIT_EXCEEDED: 422,
  BERTH_ALLOCATION_NOT_FOUND: 404,
  BERTH_DEVICES_UNAVAILABLE: 409,
  BERTH_ALLOCATION_EXISTS: 409,
  BERTH_OBSERVE_ONLY: 409,
  BERTH_UNEXPECTED_OBJECT_TYPE: 502,
  BERTH_PLUGIN_CALL_FAILED: 502,
  BERTH_SOURCE_FAILED: 502,
  BERTH_CACHE_SYNC_TIMEOUT: 503,
  BERTH_NOT_READY: 503,
  BERTH_SHUT_DOWN: 503,
  BERTH_CSI_DRIVER_NOT_FOUND: 404,
  BERTH_CSI_VOLUME_NOT_FOUND: 404,
  BERTH_CSI_CONFLICT: 409,
  BERTH_CSI_CAPABILITY_MISSING: 409,
  BERTH_CSI_INVALID_ARGUMENT: 400,
  BERTH_CSI_RESOURCE_EXHAUSTED: 507,
  BERTH_CSI_DRIVER_UNAVAILABLE: 503,
  BERTH_CSI_DRIVER_FAILED: 502,
};

/** Seconds a client should wait before retrying, from the error's `details.retryAfterSeconds`. */
export function retryAfterFor(err: BerthError): number | undefined {
  const value = err.details.retryAfterSeconds;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

export function httpStatusFor(code: BerthErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

export type { ErrorBody };

export function errorBody(code: BerthErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}

/** Fastify's own errors (body parsing, limits) carry a statusCode and an FST_ code. */
interface FrameworkError {
  statusCode?: number;
  code?: string;
  message: string;
}

/**
 * Any error thrown while serving a request, as a BerthError with a fitting
 * code: BerthErrors keep theirs, fastify's client errors become
 * BAD_REQUEST/PAYLOAD_TOO_LARGE with a message that says what to fix.
 */
export function toApiError(err: unknown, limitBytes: number): BerthError {
  if (isBerthError(err)) return err;
  const framework = err as FrameworkError;
  const status = typeof framework?.statusCode === 'number' ? framework.statusCode : 500;
  if (status === 413 || framework?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new BerthError(
      'BERTH_PAYLOAD_TOO_LARGE',
      `request body is larger than ${limitBytes} bytes; send a smaller document`,
      { cause: err },
    );
  }
  if (framework?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
    return new BerthError(
      'BERTH_BAD_REQUEST',
      'unsupported Content-Type; send the body as JSON with Content-Type: application/json',
      { cause: err },
    );
  }
  if (framework?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new BerthError('BERTH_BAD_REQUEST', 'request body is empty; send a JSON document', { cause: err });
  }
  if (framework?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) {
    return new BerthError(
      'BERTH_BAD_REQUEST',
      'request body is not valid JSON; send a JSON document with Content-Type: application/json',
      { cause: err },
    );
  }
  if (status >= 400 && status < 500) {
    return new BerthError('BERTH_BAD_REQUEST', errorMessage(err), { cause: err });
  }
  return BerthError.from(err, 'BERTH_INTERNAL');
}
