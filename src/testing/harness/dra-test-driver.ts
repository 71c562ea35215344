/**
 * A DRA driver's DRAPlugin service (v1 or v1beta1) on a unix socket. By
 * default it prepares every claim with one device named after the claim;
 * `behaviour` changes that while it runs (per-claim errors, left-out claims,
 * a failing call), and every call's claim UIDs are recorded.
 */
import { status as grpcStatus, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { draApis } from '../../handlers/dra/dra-wire.js';
import type { ClaimRef, DraService, PrepareResponse, UnprepareResponse } from '../../handlers/dra/index.js';

import { type GrpcTestServer, grpcServiceError, startGrpcTestServer } from './grpc-test-server.js';

export interface DraTestDriverBehaviour {
  /** Claim UIDs answered with this error text. */
  errors?: Record<string, string>;
  /** Claim UIDs left out of the answer. */
  omit?: string[];
  /** The whole call fails with INTERNAL and this text. */
  failCall?: string;
  /** Calls are never answered (until the server stops). */
  hang?: boolean;
}

export interface DraTestDriver extends GrpcTestServer {
  behaviour: DraTestDriverBehaviour;
  /** `prepare <uid,...>` / `unprepare <uid,...>` per call. */
  readonly calls: string[];
}

export async function startDraTestDriver(
  socketPath: string,
  service: DraService,
  behaviour: DraTestDriverBehaviour = {},
): Promise<DraTestDriver> {
  const calls: string[] = [];
  const api = draApis[service];
  const state = { behaviour, calls } as { behaviour: DraTestDriverBehaviour; calls: string[] };
  const claimsOf = (call: ServerUnaryCall<unknown, unknown>) =>
    (call.request as { claims: ClaimRef[] }).claims;
  const server = await startGrpcTestServer(socketPath, [
    [
      api.service,
      {
        NodePrepareResources: (call: ServerUnaryCall<unknown, unknown>, done: sendUnaryData<unknown>) => {
          const claims = claimsOf(call);
          calls.push(`prepare ${claims.map((c) => c.uid).join(',')}`);
          const b = state.behaviour;
          if (b.hang) return;
          if (b.failCall !== undefined) {
            done(grpcServiceError(grpcStatus.INTERNAL, b.failCall));
            return;
          }
          const answer: PrepareResponse['claims'] = {};
          for (const claim of claims) {
            if (b.omit?.includes(claim.uid)) continue;
            const error = b.errors?.[claim.uid];
            answer[claim.uid] =
              error === undefined
                ? {
                    devices: [
                      {
                        requestNames: ['req-0'],
                        poolName: 'pool-a',
                        deviceName: `dev-${claim.name}`,
                        cdiDeviceIds: [`example.com/device=${claim.name}`],
                      },
                    ],
                    error: '',
                  }
                : { devices: [], error };
          }
          done(null, api.prepareResponse({ claims: answer }));
        },
        NodeUnprepareResources: (call: ServerUnaryCall<unknown, unknown>, done: sendUnaryData<unknown>) => {
          const claims = claimsOf(call);
          calls.push(`unprepare ${claims.map((c) => c.uid).join(',')}`);
          const b = state.behaviour;
          if (b.hang) return;
          if (b.failCall !== undefined) {
            done(grpcServiceError(grpcStatus.INTERNAL, b.failCall));
            return;
          }
          const answer: UnprepareResponse['claims'] = {};
          for (const claim of claims) {
            if (b.omit?.includes(claim.uid)) continue;
            answer[claim.uid] = { error: b.errors?.[claim.uid] ?? '' };
          }
          done(null, api.unprepareResponse({ claims: answer }));
        },
      },
    ],
  ]);
  return Object.assign(state, {
    socketPath: server.socketPath,
    stop: server.stop,
    [Symbol.asyncDispose]: server.stop,
  });
}
