/**
 * How a liveness period's keepalive pings are spread over the period.
 *
 * Sent all at once, a period's pings (up to 1,000) woke every plugin in the
 * same millisecond and came back as one burst of answers, and a new plugin's
 * handshake that met the burst waited behind it: in the one-plugin benchmark
 * with a grpc-go farm, outliers of 8-14 ms sat at the first period's tick in
 * five of six runs, and with 1,000 plugins registered the worst p99 went from
 * 1.1-2.1x the floor's to 0.9-1.2x once the pings were sliced. On a real node
 * those are separate processes, all woken together every period.
 *
 * Smaller slices cost berth CPU, though: a burst keeps the plugins awake,
 * while a ping that finds its plugin asleep pays for waking it, and berth's
 * write of 1,000 pings in slices of 32 took twice the time of one burst
 * (+0.3 to 0.9% of a core at idle with 1,000 plugins, against an idle goal of
 * 1%). Slices of 100, a second apart, cost nothing measurable (0.98% against
 * 0.90% over five interleaved pairs) and cut a burst to a tenth (issue 20).
 */

/** The most pings sent together. */
export const PINGS_PER_SLICE = 100;

/** Slices are at least this far apart (10 slices in the default 10 s period). */
export const MIN_SLICE_INTERVAL_MS = 1_000;

/** How many slices a period's `budget` pings go out in: 1 for up to PINGS_PER_SLICE. */
export function pingSliceCount(budget: number, periodMs: number): number {
  const wanted = Math.ceil(budget / PINGS_PER_SLICE);
  const most = Math.max(1, Math.floor(periodMs / MIN_SLICE_INTERVAL_MS));
  return Math.max(1, Math.min(wanted, most));
}

/** The pings of slice `index` (0-based) of `slices`: the budget shared out evenly, the shares summing to it. */
export function pingSliceShare(budget: number, slices: number, index: number): number {
  return Math.floor(((index + 1) * budget) / slices) - Math.floor((index * budget) / slices);
}
