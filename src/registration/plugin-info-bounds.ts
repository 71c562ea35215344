/**
 * Bounds on what a plugin may say about itself in GetInfo. The kubelet has
 * none beyond gRPC's 4 MiB message limit, and a plugin with a 3 MB name made
 * every later registration slow (each registry change is persisted whole).
 * These limits are far above anything real plugins send (CSI driver names are
 * at most 63 characters, device-plugin resource names such as example.com/dev
 * at most 316, DRA driver names are DNS subdomains of at most 253), so every
 * plugin the kubelet accepts in practice is accepted here.
 *
 * Two checks:
 * - on the wire (`decodePluginInfo` in plugin-info-decode.ts, the GetInfo
 *   decoder): every string field must be valid UTF-8. protobuf-es would replace bad bytes
 *   silently; Go's protobuf refuses them, so the kubelet's GetInfo fails on
 *   them too, and so does berth's. The message itself is capped at
 *   PLUGIN_INFO_LIMITS.messageBytes by the registration client. Unlike the
 *   kubelet, berth then still tells the plugin why (`refuseUndecodableInfo`).
 * - on the decoded reply (`pluginInfoProblem`): sizes, counts and control
 *   characters. A plugin that breaks one is refused with Notify(false) naming
 *   the field and the limit (`enforcePluginInfoBounds`).
 */
import { BerthError } from '../common/index.js';
import type { CallOptions, RegistrationConnection, RegistrationInfo } from './types.js';

export const PLUGIN_INFO_LIMITS = {
  /** The whole GetInfo reply (the registration client's max receive size). */
  messageBytes: 64 * 1024,
  /** UTF-8 bytes of the plugin name. */
  nameBytes: 512,
  /** UTF-8 bytes of the plugin type. */
  typeBytes: 256,
  /** UTF-8 bytes of the endpoint (a path or address; PATH_MAX is 4096). */
  endpointBytes: 4096,
  /** Entries in supported_versions. */
  versions: 32,
  /** UTF-8 bytes of one version string. */
  versionBytes: 128,
  /**
   * Everything berth records about one plugin instance, together: the
   * GetInfo fields (type, name, version) and every option and handler fact
   * (CSI NodeGetInfo's node id and topology, ...), keys and values, in UTF-8.
   * A registration that would record more fails naming this budget.
   */
  recordedBytes: 64 * 1024,
} as const;

/** UTF-8 bytes berth would record for one instance: its type, name, version and options (keys and values). */
export function recordedBytes(record: {
  type: string;
  name: string;
  version?: string;
  options?: Readonly<Record<string, string>>;
}): number {
  let bytes =
    Buffer.byteLength(record.type) + Buffer.byteLength(record.name) + Buffer.byteLength(record.version ?? '');
  for (const [key, value] of Object.entries(record.options ?? {}))
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  return bytes;
}

/** Throws BERTH_PLUGIN_INFO_INVALID naming the budget when `record` is over PLUGIN_INFO_LIMITS.recordedBytes. */
export function enforceRecordBudget(record: Parameters<typeof recordedBytes>[0]): void {
  const bytes = recordedBytes(record);
  const budget = PLUGIN_INFO_LIMITS.recordedBytes;
  if (bytes <= budget) return;
  throw new BerthError(
    'BERTH_PLUGIN_INFO_INVALID',
    `what berth would record for ${clip(record.type)} plugin ${clip(record.name)} is ${bytes} bytes (GetInfo and handler facts together), more than the budget of ${budget} bytes per plugin`,
    { details: { type: record.type.slice(0, 64), name: record.name.slice(0, 64), bytes, budget } },
  );
}

/** A value for an error text: at most 64 characters, control characters escaped. */
export function clip(value: string): string {
  const short = value.length > 64 ? `${value.slice(0, 64)}...` : value;
  return JSON.stringify(short);
}

/** C0 controls (NUL, newline, ...), DEL and C1 controls: never part of a name, type, path or version. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function textProblem(field: string, value: string, maxBytes: number): string | undefined {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > maxBytes) return `${field} is ${bytes} bytes, more than the limit of ${maxBytes}`;
  const control = CONTROL.exec(value);
  if (control) {
    const code = (control[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0');
    return `${field} ${clip(value)} contains the control character U+${code}`;
  }
  // A lone surrogate cannot come from valid UTF-8; it can from a library caller. (isWellFormed:
  // a round trip through a Buffer cost a copy each way for every field of every registration.)
  if (!value.isWellFormed()) return `${field} ${clip(value)} is not valid Unicode`;
  return undefined;
}

/** What in a decoded GetInfo reply breaks a bound, or undefined when it is all within them. */
export function pluginInfoProblem(info: RegistrationInfo): string | undefined {
  const limits = PLUGIN_INFO_LIMITS;
  const problem =
    textProblem('name', info.name, limits.nameBytes) ??
    textProblem('type', info.type, limits.typeBytes) ??
    textProblem('endpoint', info.endpoint, limits.endpointBytes);
  if (problem !== undefined) return problem;
  if (info.supportedVersions.length > limits.versions) {
    return `supported_versions has ${info.supportedVersions.length} entries, more than the limit of ${limits.versions}`;
  }
  for (const [i, version] of info.supportedVersions.entries()) {
    const versionProblem = textProblem(`supported_versions[${i}]`, version, limits.versionBytes);
    if (versionProblem !== undefined) return versionProblem;
  }
  return undefined;
}

/**
 * The register path's bounds check: when the reply breaks a bound, tells the
 * plugin so with Notify(false) (best effort: a plugin that does not answer is
 * refused all the same) and throws BERTH_PLUGIN_INFO_INVALID. The error names
 * the plugin by clipped values only, so an oversized name never travels on
 * into events, logs or the API.
 */
export async function enforcePluginInfoBounds(
  conn: RegistrationConnection,
  info: RegistrationInfo,
  socketPath: string,
  notify: CallOptions,
): Promise<void> {
  const problem = pluginInfoProblem(info);
  if (problem === undefined) return;
  const text = `RegisterPlugin error -- plugin info out of bounds: ${problem}`;
  let notifyError: string | undefined;
  try {
    await conn.notifyRegistrationStatus({ pluginRegistered: false, error: text }, notify);
  } catch (err) {
    notifyError = err instanceof Error ? err.message : String(err);
  }
  throw new BerthError('BERTH_PLUGIN_INFO_INVALID', `${text} at socket ${socketPath}`, {
    details: {
      socketPath,
      type: info.type.slice(0, 64),
      name: info.name.slice(0, 64),
      ...(notifyError === undefined ? {} : { notifyError }),
    },
  });
}

/** The registration client's texts (grpc-js's wording) for a reply it would not decode: over the receive limit, or our decoder refused it. */
const UNDECODABLE =
  /Received message larger than max \((\d+) vs\.? ?(\d+)\)|Response message parsing error: (.*)$/m;

/**
 * The register path's hook for a GetInfo that failed because its reply broke
 * a wire bound (too large, invalid UTF-8): tells the plugin so with
 * Notify(false) on the same connection (best effort) and throws
 * BERTH_PLUGIN_INFO_INVALID. Returns without doing anything for any other
 * GetInfo failure (a deadline, a closed connection), which stays the
 * caller's to report.
 */
export async function refuseUndecodableInfo(
  conn: RegistrationConnection,
  err: unknown,
  socketPath: string,
  notify: CallOptions,
): Promise<void> {
  const match = UNDECODABLE.exec(err instanceof Error ? err.message : String(err));
  if (!match) return;
  const problem =
    match[1] !== undefined
      ? `GetInfo reply is ${match[1]} bytes, more than the limit of ${match[2]}`
      : (match[3] ?? 'GetInfo reply could not be decoded').replace(/^BerthError: /, '');
  const text = `RegisterPlugin error -- plugin info out of bounds: ${problem}`;
  let notifyError: string | undefined;
  try {
    await conn.notifyRegistrationStatus({ pluginRegistered: false, error: text }, notify);
  } catch (notifyErr) {
    notifyError = notifyErr instanceof Error ? notifyErr.message : String(notifyErr);
  }
  throw new BerthError('BERTH_PLUGIN_INFO_INVALID', `${text} at socket ${socketPath}`, {
    cause: err,
    details: { socketPath, ...(notifyError === undefined ? {} : { notifyError }) },
  });
}
