import { ApiException, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import {
  AbortScope,
  AsyncQueue,
  BerthError,
  errorMessage,
  isBerthError,
  LifecycleComponent,
  type Logger,
  silentLogger,
} from '../../common/index.js';
import type {
  GetOptions,
  KubeObject,
  ListOptions,
  ObjectList,
  ObjectResource,
  ObjectSource,
  WatchEvent,
  WatchOptions,
} from '../source.js';

/**
 * An ObjectSource backed by a Kubernetes API server (`@kubernetes/client-node` 1.x), the way the
 * kubelet reads Secrets and ConfigMaps: GET by name, LIST with `fieldSelector=metadata.name=<name>`
 * and WATCH from the list's resourceVersion with bookmarks. A watch the server ends on its own
 * (apiservers close watches after a timeout) ends the iteration cleanly; the caller watches again
 * from the last version it saw, or re-lists on BERTH_RESOURCE_VERSION_TOO_OLD (410 Gone).
 *
 * `GetOptions.resourceVersion` is not sent: the client's read call has no such parameter. Abort
 * signals on get/list stop waiting for the answer; the HTTP request itself runs to completion.
 */
export interface KubernetesSourceOptions {
  /** A loaded KubeConfig, or the path of a kubeconfig file to load. */
  kubeConfig: KubeConfig | { kubeconfigPath: string };
  logger?: Logger;
}

const KINDS: Record<ObjectResource, string> = { secrets: 'Secret', configmaps: 'ConfigMap' };
const RESOURCES: readonly ObjectResource[] = ['secrets', 'configmaps'];

export function createKubernetesSource(options: KubernetesSourceOptions): ObjectSource {
  return new KubernetesObjectSource(loadKubeConfig(options.kubeConfig), options.logger ?? silentLogger);
}

function loadKubeConfig(config: KubernetesSourceOptions['kubeConfig']): KubeConfig {
  if (config instanceof KubeConfig) return config;
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(config.kubeconfigPath);
  } catch (err) {
    throw new BerthError(
      'BERTH_CONFIG_INVALID',
      `cannot load kubeconfig ${config.kubeconfigPath}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  if (kc.getCurrentCluster() === null) {
    throw new BerthError(
      'BERTH_CONFIG_INVALID',
      `kubeconfig ${config.kubeconfigPath} has no current cluster (set current-context)`,
    );
  }
  return kc;
}

/** Its start() resolves at once: the client connects on the first call. */
class KubernetesObjectSource extends LifecycleComponent implements ObjectSource {
  readonly #kc: KubeConfig;
  readonly #core: CoreV1Api;
  readonly #logger: Logger;
  /** Aborted on stop; each watch gets a signal of its own from it (a listener per watch on one signal warned). */
  readonly #closing = new AbortScope();

  constructor(kc: KubeConfig, logger: Logger) {
    super();
    this.#kc = kc;
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#logger = logger.child({ component: 'kubernetes-source' });
  }

  /** Ends every open watch; once, also when never started. Reads fail with BERTH_SHUT_DOWN from then on. */
  protected override onStop(): void {
    this.#closing.abort(new BerthError('BERTH_SHUT_DOWN', 'kubernetes source stopped'));
  }

  async get(
    resource: ObjectResource,
    namespace: string,
    name: string,
    options: GetOptions = {},
  ): Promise<KubeObject> {
    this.#checkOpen();
    checkArgs(resource, namespace, name);
    const what = `get ${resource} ${namespace}/${name}`;
    const params = { name, namespace };
    const object = await this.#call(what, options.signal, resource, name, () =>
      resource === 'secrets'
        ? this.#core.readNamespacedSecret(params)
        : this.#core.readNamespacedConfigMap(params),
    );
    return toKubeObject(resource, object);
  }

  async list(resource: ObjectResource, namespace: string, options: ListOptions = {}): Promise<ObjectList> {
    this.#checkOpen();
    checkArgs(resource, namespace, options.name);
    const params = {
      namespace,
      ...(options.name === undefined ? {} : { fieldSelector: `metadata.name=${options.name}` }),
    };
    const list = await this.#call(
      `list ${resource} in ${namespace}`,
      options.signal,
      resource,
      undefined,
      () =>
        resource === 'secrets'
          ? this.#core.listNamespacedSecret(params)
          : this.#core.listNamespacedConfigMap(params),
    );
    const resourceVersion = list.metadata?.resourceVersion;
    if (resourceVersion === undefined || resourceVersion === '') {
      throw new BerthError(
        'BERTH_SOURCE_FAILED',
        `list ${resource} in ${namespace}: no resourceVersion in reply`,
      );
    }
    // Items of a typed list come without kind and apiVersion; toKubeObject puts them back.
    return { items: list.items.map((item) => toKubeObject(resource, item)), resourceVersion };
  }

  watch(resource: ObjectResource, namespace: string, options: WatchOptions): AsyncIterable<WatchEvent> {
    this.#checkOpen();
    checkArgs(resource, namespace, options.name);
    return { [Symbol.asyncIterator]: () => this.#watch(resource, namespace, options) };
  }

  async *#watch(
    resource: ObjectResource,
    namespace: string,
    options: WatchOptions,
  ): AsyncGenerator<WatchEvent> {
    if (options.signal.aborted || this.#closing.signal.aborted) return;
    // Two plain listeners rather than AbortSignal.any: that one is tied to the long-lived close signal.
    // The close signal is the watch's own (AbortScope), so watches add no listener to a shared one.
    const closing = this.#closing.open();
    const signals = [options.signal, closing.signal];
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
    const description = `watch ${resource} in ${namespace}${options.name === undefined ? '' : ` (${options.name})`}`;
    const query = {
      allowWatchBookmarks: true,
      resourceVersion: options.resourceVersion,
      ...(options.name === undefined ? {} : { fieldSelector: `metadata.name=${options.name}` }),
    };
    const queue = new AsyncQueue<WatchEvent>();
    let stopped = false;

    const onEvent = (type: string, object: unknown) => {
      if (stopped) return;
      const event = toWatchEvent(resource, type, object, description);
      if (event instanceof BerthError) queue.close(event);
      else if (event !== undefined) queue.push(event);
      else this.#logger.warn({ watch: description, type }, 'ignoring unknown watch event');
    };
    const onDone = (err: unknown) => {
      // Our own abort also lands here (as an AbortError); the queue is already closed then.
      if (stopped) return;
      if (err === null || err === undefined) queue.close();
      else queue.close(watchFailure(err, description));
    };

    const request = new Watch(this.#kc).watch(path, query, onEvent, onDone);
    const stop = () => {
      stopped = true;
      queue.close();
      // The request controller exists only once the response headers arrived.
      void request.then(
        (controller) => controller.abort(),
        () => {},
      );
    };
    for (const signal of signals) signal.addEventListener('abort', stop, { once: true });
    request.catch((err: unknown) => {
      if (!stopped) queue.close(watchFailure(err, description));
    });
    try {
      for await (const event of queue) yield event;
    } finally {
      for (const signal of signals) signal.removeEventListener('abort', stop);
      closing.close();
      stop();
    }
  }

  /** Runs one API call: 404 → BERTH_OBJECT_NOT_FOUND (kubelet text), other failures → BERTH_SOURCE_FAILED. */
  async #call<T>(
    what: string,
    signal: AbortSignal | undefined,
    resource: ObjectResource,
    name: string | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    if (signal?.aborted) throw new BerthError('BERTH_ABORTED', `${what}: aborted`, { cause: signal.reason });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new BerthError('BERTH_ABORTED', `${what}: aborted`, { cause: signal?.reason }));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([call(), aborted]);
    } catch (err) {
      if (isBerthError(err)) throw err;
      if (err instanceof ApiException && err.code === 404 && name !== undefined) {
        throw new BerthError('BERTH_OBJECT_NOT_FOUND', `${singular(resource)} "${name}" not found`, {
          cause: err,
          details: { resource, name },
        });
      }
      throw new BerthError('BERTH_SOURCE_FAILED', `kubernetes ${what} failed: ${describeFailure(err)}`, {
        cause: err,
      });
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  #checkOpen(): void {
    if (this.stopBegun) throw new BerthError('BERTH_SHUT_DOWN', 'kubernetes source is closed');
  }
}

function toWatchEvent(
  resource: ObjectResource,
  type: string,
  object: unknown,
  description: string,
): WatchEvent | BerthError | undefined {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      if (!isRecord(object) || !isRecord(object.metadata)) {
        return new BerthError(
          'BERTH_UNEXPECTED_OBJECT_TYPE',
          `${description}: ${type} event without an object`,
        );
      }
      return { type, object: toKubeObject(resource, object) };
    case 'BOOKMARK': {
      const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
      const resourceVersion = metadata.resourceVersion;
      if (typeof resourceVersion !== 'string') {
        return new BerthError('BERTH_SOURCE_FAILED', `${description}: BOOKMARK without a resourceVersion`);
      }
      return { type: 'BOOKMARK', resourceVersion };
    }
    case 'ERROR':
      return statusError(object, description);
    default:
      return undefined;
  }
}

/** An ERROR event carries a metav1.Status; 410 (Expired/Gone) means the version is too old. */
function statusError(status: unknown, description: string): BerthError {
  const code = isRecord(status) ? status.code : undefined;
  const message = isRecord(status) && typeof status.message === 'string' ? status.message : 'unknown error';
  if (code === 410) {
    return new BerthError('BERTH_RESOURCE_VERSION_TOO_OLD', `${description}: ${message}; re-list`, {
      details: { status },
    });
  }
  return new BerthError('BERTH_SOURCE_FAILED', `${description} failed: ${message} (code ${String(code)})`, {
    details: { status },
  });
}

function watchFailure(err: unknown, description: string): BerthError {
  const statusCode = isRecord(err) ? err.statusCode : undefined;
  if (statusCode === 410) {
    return new BerthError('BERTH_RESOURCE_VERSION_TOO_OLD', `${description}: 410 Gone; re-list`, {
      cause: err,
    });
  }
  return new BerthError('BERTH_SOURCE_FAILED', `${description} failed: ${errorMessage(err)}`, { cause: err });
}

/** Plain JSON (the client's models hold Dates) with kind and apiVersion always set. */
function toKubeObject(resource: ObjectResource, value: unknown): KubeObject {
  const plain = JSON.parse(JSON.stringify(value)) as KubeObject;
  return { ...plain, apiVersion: plain.apiVersion ?? 'v1', kind: plain.kind ?? KINDS[resource] };
}

function describeFailure(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message: string | undefined;
    if (typeof body === 'string') {
      try {
        const status: unknown = JSON.parse(body);
        if (isRecord(status) && typeof status.message === 'string') message = status.message;
      } catch {
        message = body.slice(0, 200);
      }
    }
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return errorMessage(err);
}

function singular(resource: ObjectResource): string {
  return resource === 'secrets' ? 'secret' : 'configmap';
}

function checkArgs(resource: string, namespace: unknown, name: unknown): void {
  if (!(RESOURCES as readonly string[]).includes(resource)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `unknown object resource "${resource}" (secrets, configmaps)`,
    );
  }
  if (typeof namespace !== 'string' || namespace === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `object namespace must be a non-empty string`);
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `object name must be a non-empty string`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
