/**
 * The node flags berth's bin runs with: its shebang passes them
 * (`#!/usr/bin/env -S node …`, checked against this list by
 * node-options.test.ts), and the scale benchmark runs its registrar with the
 * same ones, so what it measures is what the daemon does.
 *
 * --max-semi-space-size=4: under a storm's allocation V8 grows the young
 * generation's semi-spaces to 16 MiB, and each scavenge then copies what the
 * storm keeps alive (64 handshakes in flight, the new registrations): 5–18 ms
 * pauses, most of the event loop's worst turns in a storm of 5,000, and about
 * 20 MiB more peak RSS. Capped at 4 MiB the pauses are a few milliseconds and
 * the storm's CPU is no higher (issue 20, bench/results.md). The flag can only
 * be given at start: V8 sizes the young generation when the heap is set up.
 */
export const NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=4']);
