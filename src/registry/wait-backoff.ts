/** WaitForPlugin's safety-net poll (Nomad): 200 ms, doubling, capped at 5 s. */
export const WAIT_POLL_INITIAL_MS = 200;
export const WAIT_POLL_MAX_MS = 5000;

export function nextPollDelay(previousMs: number): number {
  return Math.min(previousMs * 2, WAIT_POLL_MAX_MS);
}
