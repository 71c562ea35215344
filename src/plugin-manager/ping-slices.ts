/**
 * How a liveness period's keepalive pings are spread over the period.
 *
 * Sent all at once, a period's pings (up to 1,000) woke every plugin in the
 * same millisecond and came back as one burst of answers: with 227 plugins
 * of the Go farm registered, the farm spent 31 ms of one core answering
 * them, and a new plugin's handshake that met the burst waited that long
 * (the slowest of 200 one-plugin registrations, in every run; issue 20).
 * On a real node those are separate processes, all woken together every
 * period. In slices of at most PINGS_PER_SLICE, spaced evenly over the
 * period, a burst costs the plugins a few milliseconds at most.
 */

/** The most pings sent together (about 4 ms of a grpc-go plugin farm's CPU to answer). */
export const PINGS_PER_SLICE = 32;

/** Slices are at least this far apart, so a small node wakes for them rarely (40 slices in a 10 s period). */
export const MIN_SLICE_INTERVAL_MS = 250;

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
