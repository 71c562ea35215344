/**
 * The kubelet's example handler (pluginwatcher/example_handler.go): records
 * what it is asked, accepts only plugins advertising exactly the expected
 * versions with a non-empty endpoint, and on register proves the plugin
 * serves both example API versions by calling them. A test helper: berth's
 * daemon never registers it.
 */
import { BerthError } from '../common/index.js';
import type { PluginCallContext, PluginHandler, RegisterContext } from '../handlers/index.js';
import { callExampleInfo } from '../registration/index.js';

export interface ExampleHandlerOptions {
  supportedVersions: string[];
  /** Accept plugins found in the deprecated directory. Default false. */
  permitDeprecatedDir?: boolean;
  /** Timeout of each GetExampleInfo call made on register. Default 1 s (upstream's dial timeout). */
  callTimeoutMs?: number;
}

const DEFAULT_CALL_TIMEOUT_MS = 1000;

export class ExampleHandler implements PluginHandler {
  readonly supportedVersions: readonly string[];
  readonly permitDeprecatedDir: boolean;
  readonly #callTimeoutMs: number;
  #events: string[] = [];

  constructor(options: ExampleHandlerOptions) {
    this.supportedVersions = [...options.supportedVersions];
    this.permitDeprecatedDir = options.permitDeprecatedDir ?? false;
    this.#callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /** "validate <name>", "register <name>", "deregister <name>", in call order (a copy). */
  get events(): string[] {
    return [...this.#events];
  }

  resetEvents(): void {
    this.#events = [];
  }

  validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext): void {
    this.#events.push(`validate ${name}`);
    if (context.foundInDeprecatedDir && !this.permitDeprecatedDir) {
      throw new BerthError(
        'BERTH_VALIDATION_FAILED',
        `plugin ${name} was found in the deprecated plugin directory, which this handler does not accept`,
      );
    }
    if (!sameVersions(versions, this.supportedVersions)) {
      throw new BerthError(
        'BERTH_VALIDATION_FAILED',
        `versions('${goList(versions)}') != supported versions('${goList(this.supportedVersions)}')`,
      );
    }
    if (endpoint === '') {
      throw new BerthError('BERTH_VALIDATION_FAILED', 'expecting non empty endpoint');
    }
  }

  async registerPlugin(name: string, endpoint: string, _versions: string[], _context: RegisterContext) {
    this.#events.push(`register ${name}`);
    // The plugin must serve every API version it listed.
    await callExampleInfo(endpoint, 'v1beta1', this.#callTimeoutMs);
    await callExampleInfo(endpoint, 'v1beta2', this.#callTimeoutMs);
  }

  deRegisterPlugin(name: string, _endpoint: string, _context: PluginCallContext): void {
    this.#events.push(`deregister ${name}`);
  }
}

export function createExampleHandler(options: ExampleHandlerOptions): ExampleHandler {
  return new ExampleHandler(options);
}

function sameVersions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Go's `%v` of a []string (`[a b]`), so the refusal reads exactly like upstream's. */
function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}
