/**
 * The claim side of the DRA handler's prepare/unprepare: what a request may
 * carry, and the per-claim result shapes.
 */
import { BerthError } from '../../common/index.js';
import type { DraService } from './dra-services.js';
import type { ClaimRef } from './dra-wire.js';

export interface DraDevice {
  requestNames: string[];
  poolName: string;
  deviceName: string;
  cdiDeviceIds: string[];
}

export interface ClaimResult extends ClaimRef {
  /** False when the plugin reported an error for the claim or left it out. */
  ok: boolean;
  error: string | null;
  /** Prepare only. */
  devices?: DraDevice[];
}

export interface ClaimsResult {
  driver: string;
  endpoint: string;
  service: DraService;
  /** True when every claim succeeded. */
  ok: boolean;
  claims: ClaimResult[];
  /** UIDs the plugin answered for that were not asked about (ignored, as the kubelet does). */
  unexpected: string[];
}

/** The bounds of a prepare/unprepare request (it comes from outside, through the API). */
export function checkClaims(claims: unknown, maxClaims: number): asserts claims is ClaimRef[] {
  if (!Array.isArray(claims) || claims.length === 0) {
    throw new BerthError('BERTH_BAD_REQUEST', 'claims must be a non-empty list of {namespace, uid, name}');
  }
  if (claims.length > maxClaims) {
    throw new BerthError(
      'BERTH_BAD_REQUEST',
      `at most ${maxClaims} claims per call, got ${claims.length}; split the request`,
    );
  }
  const seen = new Set<string>();
  claims.forEach((claim: unknown, i) => {
    const c = claim as Record<string, unknown> | null;
    for (const key of ['namespace', 'uid', 'name'] as const) {
      const value = c?.[key];
      if (typeof value !== 'string' || value === '' || value.length > 253) {
        throw new BerthError(
          'BERTH_BAD_REQUEST',
          `claims[${i}].${key} must be a non-empty string of at most 253 characters`,
        );
      }
    }
    const uid = c?.uid as string;
    if (seen.has(uid)) throw new BerthError('BERTH_BAD_REQUEST', `claims[${i}].uid ${uid} is listed twice`);
    seen.add(uid);
  });
}

/** The error of a claim the plugin left out of its answer (the kubelet calls again for it). */
export function missingText(method: string): string {
  return `claim missing from the plugin's ${method} response`;
}
