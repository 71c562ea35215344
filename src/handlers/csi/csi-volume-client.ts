/**
 * Opens the CSI volume client of one driver for one operation. The client
 * (csi-volume-calls.ts: grpc-js and the generated csi.v1 messages) is loaded
 * with the first one a process opens, so a daemon start loads no gRPC
 * (issue 20); its contract is csi-volume-contract.ts.
 */
import { loadOnce } from '../../common/index.js';
import type { CsiVolumeClient, CsiVolumeClientOptions } from './csi-volume-contract.js';

const volumeCalls = loadOnce(() => import('./csi-volume-calls.js'));

/** A client for one operation; the first call of the process loads the gRPC side. */
export async function openCsiVolumeClient(
  driver: string,
  endpoint: string,
  options: CsiVolumeClientOptions,
): Promise<CsiVolumeClient> {
  const { GrpcCsiVolumeClient } = await volumeCalls();
  return new GrpcCsiVolumeClient(driver, endpoint, options);
}
