/**
 * gRPC failures rendered as Go's status error text (`rpc error: code =
 * Unavailable desc = ...`), so a handler error that the kubelet passes on
 * verbatim reads the same under berth. grpc-js errors carry the numeric code
 * and the details; anything else is shown as its message.
 */
const GO_CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
] as const;

export function grpcErrorText(err: unknown): string {
  const e = err as { code?: unknown; details?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'number' && typeof e.details === 'string') {
    const name = GO_CODE_NAMES[e.code] ?? `Code(${e.code})`;
    return `rpc error: code = ${name} desc = ${e.details}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}
