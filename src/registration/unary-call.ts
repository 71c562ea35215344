/**
 * One unary gRPC call with a deadline and AbortSignal support, shared by the
 * registration client and the example client. Rejects with grpc-js's own
 * ServiceError (callers wrap it in a BerthError with their own code).
 */
import { type Client, Metadata, type MethodDefinition, type ServiceError } from '@grpc/grpc-js';
import { abortedError } from '../common/index.js';

export function callUnary<Req, Res>(
  client: Client,
  method: MethodDefinition<Req, Res>,
  request: Req,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  what: string,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal, what));
      return;
    }
    let onAbort: (() => void) | undefined;
    const call = client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err: ServiceError | null, response?: Res) => {
        if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) reject(abortedError(signal, what));
        else if (err) reject(err);
        else if (response === undefined) reject(new Error('empty response'));
        else resolve(response);
      },
    );
    if (signal !== undefined) {
      onAbort = () => call.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}
