/**
 * How berth treats a plugins directory. `registrar` (the default): berth
 * registers the plugins it finds, like the kubelet's plugin manager, and
 * tells each one the outcome (NotifyRegistrationStatus). `observe`: another
 * registrar (a kubelet) owns the directory; berth dials and asks only
 * read-only questions (GetInfo, and each type's read-only calls), runs each
 * handler's validation as a dry run, and never tells a plugin anything.
 */
export type BerthMode = 'registrar' | 'observe';

export const BERTH_MODES: readonly BerthMode[] = Object.freeze(['registrar', 'observe']);

export const DEFAULT_BERTH_MODE: BerthMode = 'registrar';
