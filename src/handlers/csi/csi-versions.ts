/**
 * The kubelet CSI handler's version rules (csi_plugin.go validateVersions),
 * with its texts: only 1.x versions, the highest one chosen, and a name that
 * is already registered only moves to a strictly higher version.
 */
import { BerthError } from '../../common/index.js';
import { compareGenericVersions, type GenericVersion, highestSupportedVersion } from '../generic-version.js';
import { goQuote, goQuotedList } from '../go-format.js';

/** Every text of the kubelet's CSI handler starts with its log prefix. */
export const CSI_LOG_PREFIX = 'kubernetes.io/csi: ';

export type CsiCaller = 'ValidatePlugin' | 'RegisterPlugin';

export type VersionCheck = { ok: true; highest: GenericVersion } | { ok: false; error: string };

/**
 * `existing` is the highest version of an already-registered driver with
 * this name, if any. The error texts are the bare ones (RegisterPlugin's);
 * ValidatePlugin wraps them with `validationErrorText`.
 */
export function validateCsiVersions(
  caller: CsiCaller,
  name: string,
  versions: readonly string[],
  existing: GenericVersion | undefined,
): VersionCheck {
  const head = `${CSI_LOG_PREFIX}${caller} for CSI driver ${goQuote(name)} failed.`;
  if (versions.length === 0) {
    return { ok: false, error: `${head} Plugin returned an empty list for supported versions` };
  }
  let highest: GenericVersion;
  try {
    highest = highestSupportedVersion(versions);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error: `${head} None of the versions specified ${goQuotedList(versions)} are supported. err=${reason}`,
    };
  }
  // Equal counts as "higher": the same driver registering twice is refused.
  if (existing !== undefined && compareGenericVersions(existing, highest) >= 0) {
    return {
      ok: false,
      error: `${head} Another driver with the same name is already registered with a higher supported version: ${goQuote(existing.toString())}`,
    };
  }
  return { ok: true, highest };
}

/** ValidatePlugin's wrapping of any version error. */
export function validationErrorText(name: string, endpoint: string, error: string): string {
  return `validation failed for CSI Driver ${name} at endpoint ${endpoint}: ${error}`;
}

/** ValidatePlugin's check (CSIPlugin and csi-controller): BERTH_VALIDATION_FAILED with the kubelet's text. */
export function checkCsiValidate(
  name: string,
  endpoint: string,
  versions: readonly string[],
  existing: GenericVersion | undefined,
): void {
  const check = validateCsiVersions('ValidatePlugin', name, versions, existing);
  if (!check.ok)
    throw new BerthError('BERTH_VALIDATION_FAILED', validationErrorText(name, endpoint, check.error));
}

/** RegisterPlugin's check, again (another registration of the name may have landed since validate): the highest version. */
export function checkCsiRegister(
  name: string,
  versions: readonly string[],
  existing: GenericVersion | undefined,
): GenericVersion {
  const check = validateCsiVersions('RegisterPlugin', name, versions, existing);
  if (!check.ok) throw new BerthError('BERTH_REGISTER_FAILED', check.error);
  return check.highest;
}
