/**
 * Durations in the config file: strings such as "500ms", "10s", "2m", "1h30m"
 * (Go's time.ParseDuration spelling, which kubelet and Nomad users know), or a
 * plain number of milliseconds.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;

/** Milliseconds for a duration string or number; undefined when it cannot be read. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let match = PART.exec(text); match !== null; match = PART.exec(text)) {
    const [whole, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit as string] ?? Number.NaN);
    consumed += whole.length;
  }
  if (consumed !== text.length || !Number.isFinite(total)) return undefined;
  return Math.round(total);
}

/** "1m30s" / "500ms" style text for a millisecond count (used in docs, status and logs). */
export function formatConfigDuration(ms: number): string {
  if (ms < 1000 || ms % 1000 !== 0) return `${ms}ms`;
  let seconds = ms / 1000;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return `${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${seconds ? `${seconds}s` : ''}`;
}

/** Node's timers take at most 2^31 - 1 ms; a longer delay fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a duration cannot be used (undefined when it can): beyond the timer range, or 0 where that means nothing. */
export function durationProblem(ms: number, positive: boolean): string | undefined {
  if (ms > MAX_TIMER_MS) return `must be below 2^31 ms (about 24.8 days), the longest timer Node.js can set`;
  if (positive && ms <= 0) return 'must be greater than 0';
  return undefined;
}
