import { goQuote } from '../common/index.js';

/**
 * Go's fmt renderings of string slices, so validation errors read exactly
 * like the kubelet's (tests and users match on these texts).
 */

/** `%v` of a []string: `[a b]`. */
export function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

/** `%q` of a []string: `["a" "b"]`. */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`;
}

export { goQuote } from '../common/index.js';
