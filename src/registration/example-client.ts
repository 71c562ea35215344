/**
 * Calls GetExampleInfo on a plugin's example API, as the kubelet's example
 * handler does after registering a plugin. One fresh connection per call.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { BerthError } from '../common/index.js';
import { assertTimeout } from './call-deadline.js';
import { freshChannelOptions } from './dial.js';
import { ExampleRequestSchema as ExampleRequestV1beta1Schema } from './gen/example/v1beta1/example_pb.js';
import { ExampleRequestSchema as ExampleRequestV1beta2Schema } from './gen/example/v1beta2/example_pb.js';
import { callUnary } from './unary-call.js';
import { type ExampleVersion, exampleV1beta1Methods, exampleV1beta2Methods, unixTarget } from './wire.js';

export async function callExampleInfo(
  endpoint: string,
  version: ExampleVersion,
  timeoutMs: number,
): Promise<void> {
  if (typeof endpoint !== 'string' || endpoint === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'GetExampleInfo: endpoint is empty');
  }
  const what = `${version} GetExampleInfo at ${endpoint}`;
  assertTimeout(timeoutMs, what);
  const client = new Client(unixTarget(endpoint), credentials.createInsecure(), freshChannelOptions);
  try {
    if (version === 'v1beta1') {
      await callUnary(
        client,
        exampleV1beta1Methods.getExampleInfo,
        create(ExampleRequestV1beta1Schema, { request: 'example request', v1beta1Field: 'v1beta1' }),
        timeoutMs,
        undefined,
        what,
      );
    } else if (version === 'v1beta2') {
      await callUnary(
        client,
        exampleV1beta2Methods.getExampleInfo,
        create(ExampleRequestV1beta2Schema, { request: 'example request', v1beta2Field: 'v1beta2' }),
        timeoutMs,
        undefined,
        what,
      );
    } else {
      throw new BerthError('BERTH_INVALID_ARGUMENT', `unsupported service: '${String(version)}'`);
    }
  } catch (err) {
    throw BerthError.from(err, 'BERTH_PLUGIN_CALL_FAILED', `${what} failed`);
  } finally {
    client.close();
  }
}
