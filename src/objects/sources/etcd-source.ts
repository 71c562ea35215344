import { Etcd3, type IKeyValue, type IWatchResponse, Range, type Watcher } from 'etcd3';
import {
  AbortScope,
  AsyncQueue,
  BerthError,
  type Clock,
  errorMessage,
  LifecycleComponent,
  type Logger,
  silentLogger,
  systemClock,
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
 * An ObjectSource backed by etcd v3 (the `etcd3` client; tested against etcd 3.4).
 *
 * Layout: each object is one key, `<prefix><resource>/<namespace>/<name>`, whose value is the
 * object as JSON (kind, metadata, data, immutable, ...). The key is authoritative for namespace
 * and name. `metadata.resourceVersion` is never stored: on every read it is set to the key's
 * mod_revision, so it changes on each write exactly like a Kubernetes resourceVersion. A list
 * reports the store revision it was taken at (the response header revision), and a watch from
 * that revision continues exactly after it (etcd's watch starts at revision + 1).
 */
export interface EtcdSourceOptions {
  endpoints: string[];
  /** Key prefix for all objects. Default '/berth/objects/'. */
  prefix?: string;
  logger?: Logger;
  /** Bounds how long a watch waits for etcd to confirm its cancellation. */
  clock?: Clock;
  /** Reuse an existing client; it is then not closed by close() unless `ownsClient`. */
  client?: Etcd3;
  /** Hand the given client over: close() closes it. */
  ownsClient?: boolean;
}

export interface EtcdSource extends ObjectSource {
  /** The prefix under which objects are stored (ends with '/'). */
  readonly prefix: string;
  /** Stores `obj` under its namespace and name; returns the new store revision. */
  putObject(resource: ObjectResource, obj: KubeObject): Promise<string>;
  /** Deletes the object if present; returns the store revision after the delete. */
  deleteObject(resource: ObjectResource, namespace: string, name: string): Promise<string>;
  /** Compacts etcd's history up to `revision` (default: the current revision); returns it. */
  compact(revision?: string): Promise<string>;
}

export const DEFAULT_ETCD_PREFIX = '/berth/objects/';
/** gRPC deadline for unary calls (wall-clock, as gRPC requires). */
const CALL_TIMEOUT_MS = 30_000;
/** How long abort waits for etcd to confirm a watch cancellation before giving up on it. */
const CANCEL_TIMEOUT_MS = 5_000;
const RESOURCES: readonly ObjectResource[] = ['secrets', 'configmaps'];
const KINDS: Record<ObjectResource, string> = { secrets: 'Secret', configmaps: 'ConfigMap' };

interface ResolvedOptions {
  prefix: string;
  logger: Logger;
  clock: Clock;
  client: Etcd3;
  ownsClient: boolean;
}

function resolveOptions(options: EtcdSourceOptions): ResolvedOptions {
  if (options.client === undefined && options.endpoints.length === 0) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'etcd source needs at least one endpoint');
  }
  let prefix = options.prefix ?? DEFAULT_ETCD_PREFIX;
  if (prefix === '') throw new BerthError('BERTH_INVALID_ARGUMENT', 'etcd source prefix must not be empty');
  if (!prefix.endsWith('/')) prefix += '/';
  const client =
    options.client ??
    new Etcd3({
      hosts: options.endpoints,
      // Unary calls get a deadline so a dead etcd fails a get/list instead of hanging it;
      // watch streams must stay open indefinitely.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_TIMEOUT_MS }),
    });
  return {
    prefix,
    logger: (options.logger ?? silentLogger).child({ component: 'etcd-source' }),
    clock: options.clock ?? systemClock,
    client,
    ownsClient: options.client === undefined || options.ownsClient === true,
  };
}

export function createEtcdSource(options: EtcdSourceOptions): EtcdSource {
  return new EtcdObjectSource(resolveOptions(options));
}

/** Its start() resolves at once: the client connects on the first call. */
class EtcdObjectSource extends LifecycleComponent implements EtcdSource {
  readonly prefix: string;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #client: Etcd3;
  readonly #ownsClient: boolean;
  /** Aborted on stop; each watch gets a signal of its own from it (a listener per watch on one signal warned). */
  readonly #closing = new AbortScope();
  /** Stop functions of the open watches, so stop() can end them even if nobody iterates. */
  readonly #activeWatches = new Set<() => Promise<void>>();

  constructor(options: ResolvedOptions) {
    super();
    this.prefix = options.prefix;
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#client = options.client;
    this.#ownsClient = options.ownsClient;
  }

  async get(
    resource: ObjectResource,
    namespace: string,
    name: string,
    options: GetOptions = {},
  ): Promise<KubeObject> {
    this.#checkOpen();
    const key = this.#key(resource, namespace, name);
    const response = await this.#call(`get ${key}`, options.signal, () =>
      // resourceVersion "0" accepts any cached copy, so a local (serializable) read will do.
      this.#client.kv.range({ key: Buffer.from(key), serializable: options.resourceVersion === '0' }),
    );
    const kv = response.kvs[0];
    if (kv === undefined) {
      throw new BerthError('BERTH_OBJECT_NOT_FOUND', `${singular(resource)} "${name}" not found`, {
        details: { resource, namespace, name },
      });
    }
    const parsed = this.#decode(resource, kv);
    if (parsed instanceof BerthError) throw parsed;
    return parsed;
  }

  async list(resource: ObjectResource, namespace: string, options: ListOptions = {}): Promise<ObjectList> {
    this.#checkOpen();
    const request =
      options.name === undefined
        ? rangeRequest(Range.prefix(this.#namespacePrefix(resource, namespace)))
        : { key: Buffer.from(this.#key(resource, namespace, options.name)) };
    const what = `list ${resource} in ${namespace}`;
    const response = await this.#call(what, options.signal, () => this.#client.kv.range(request));
    const items: KubeObject[] = [];
    for (const kv of response.kvs) {
      const parsed = this.#decode(resource, kv);
      if (parsed instanceof BerthError) {
        // One bad value must not hide every other object in the namespace: report it and go on.
        this.#logger.warn({ key: kv.key.toString(), err: parsed }, 'skipping unreadable object');
        continue;
      }
      items.push(parsed);
    }
    return { items, resourceVersion: response.header.revision };
  }

  watch(resource: ObjectResource, namespace: string, options: WatchOptions): AsyncIterable<WatchEvent> {
    this.#checkOpen();
    const target =
      options.name === undefined
        ? { prefix: this.#namespacePrefix(resource, namespace) }
        : { key: this.#key(resource, namespace, options.name) };
    const startRevision = nextRevision(options.resourceVersion);
    return { [Symbol.asyncIterator]: () => this.#watch(resource, target, startRevision, options.signal) };
  }

  async putObject(resource: ObjectResource, obj: KubeObject): Promise<string> {
    this.#checkOpen();
    if (
      typeof obj !== 'object' ||
      obj === null ||
      typeof obj.metadata !== 'object' ||
      obj.metadata === null
    ) {
      throw new BerthError('BERTH_INVALID_ARGUMENT', 'putObject needs an object with metadata');
    }
    const { name, namespace } = obj.metadata;
    if (typeof namespace !== 'string') {
      throw new BerthError('BERTH_INVALID_ARGUMENT', `putObject: object "${String(name)}" has no namespace`);
    }
    const key = this.#key(resource, namespace, name);
    // The revision is etcd's to assign; a stored resourceVersion would only go stale.
    const { resourceVersion: _dropped, ...metadata } = obj.metadata;
    const stored = { ...withKind(resource, obj), metadata };
    const response = await this.#call(`put ${key}`, undefined, () =>
      this.#client.kv.put({ key: Buffer.from(key), value: Buffer.from(JSON.stringify(stored)) }),
    );
    return response.header.revision;
  }

  async deleteObject(resource: ObjectResource, namespace: string, name: string): Promise<string> {
    this.#checkOpen();
    const key = this.#key(resource, namespace, name);
    const response = await this.#call(`delete ${key}`, undefined, () =>
      this.#client.kv.deleteRange({ key: Buffer.from(key) }),
    );
    return response.header.revision;
  }

  async compact(revision?: string): Promise<string> {
    this.#checkOpen();
    let target = revision;
    if (target === undefined) {
      const current = await this.#call('read current revision', undefined, () =>
        this.#client.kv.range({ key: Buffer.from(this.prefix), count_only: true }),
      );
      target = current.header.revision;
    }
    const at = target;
    await this.#call(`compact at revision ${at}`, undefined, () =>
      this.#client.kv.compact({ revision: at, physical: true }),
    );
    return at;
  }

  /** Ends every open watch and closes the client (when owned); once, also when never started. */
  protected override async onStop(): Promise<void> {
    this.#closing.abort(new BerthError('BERTH_SHUT_DOWN', 'etcd source stopped'));
    await Promise.allSettled([...this.#activeWatches].map((stop) => stop()));
    if (this.#ownsClient) this.#client.close();
  }

  async *#watch(
    resource: ObjectResource,
    target: { prefix: string } | { key: string },
    startRevision: string,
    callerSignal: AbortSignal,
  ): AsyncGenerator<WatchEvent> {
    if (callerSignal.aborted || this.#closing.signal.aborted) return;
    // Two plain listeners rather than AbortSignal.any: that one is tied to the long-lived close signal.
    // The close signal is the watch's own (AbortScope), so watches add no listener to a shared one.
    const closing = this.#closing.open();
    const signals = [callerSignal, closing.signal];
    const queue = new AsyncQueue<WatchEvent>();
    const builder = this.#client.watch().withPreviousKV().startRevision(startRevision);
    if ('prefix' in target) builder.prefix(target.prefix);
    else builder.key(target.key);
    const description = 'prefix' in target ? `prefix ${target.prefix}` : `key ${target.key}`;
    const watcher = builder.watcher();
    // Set once etcd has dropped the watcher itself (error): cancelling it then would wait forever.
    let ended = false;
    // The first revision not yet delivered to the consumer. etcd3 resumes a reconnected watch from
    // the last response *header* revision + 1, which can skip events still in flight (the header is
    // the store revision, not the last event sent), so we track it ourselves and put it back.
    let resume = BigInt(startRevision);

    watcher.on('data', (response: IWatchResponse) => {
      // etcd3 rethrows listener errors asynchronously (an uncaught exception), so never throw here.
      try {
        for (const event of this.#toEvents(resource, response)) queue.push(event);
        const lastEvent = response.events.at(-1);
        // A progress notification promises every event up to its header revision was sent.
        const delivered = lastEvent === undefined ? response.header.revision : lastEvent.kv.mod_revision;
        if (BigInt(delivered) >= resume) resume = BigInt(delivered) + 1n;
      } catch (err) {
        queue.close(new BerthError('BERTH_INTERNAL', `etcd watch on ${description}: ${errorMessage(err)}`));
      }
    });
    watcher.on('disconnected', (err: Error) => {
      // etcd3 reconnects on its own; make it resume right after what we delivered.
      watcher.request.start_revision = resume.toString();
      this.#logger.warn({ watch: description, err }, 'etcd watch disconnected; reconnecting');
    });
    watcher.on('error', (err: Error) => {
      ended = true;
      void this.#watchFailure(err, description, resume.toString()).then((failure) => queue.close(failure));
    });
    watcher.on('end', () => {
      ended = true;
    });
    // Stopping cancels the etcd watcher right away (on abort or close), not when the consumer
    // next pulls, so no server-side watcher outlives its signal. Idempotent.
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        for (const signal of signals) signal.removeEventListener('abort', onAbort);
        closing.close();
        queue.close();
        if (!ended) await this.#cancel(watcher, description);
        this.#activeWatches.delete(stop);
      })();
      return stopping;
    };
    const onAbort = () => void stop();
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
    this.#activeWatches.add(stop);
    try {
      for await (const event of queue) yield event;
    } finally {
      await stop();
    }
  }

  #toEvents(resource: ObjectResource, response: IWatchResponse): WatchEvent[] {
    // A response without events is etcd's progress notification: nothing changed up to here.
    if (response.events.length === 0)
      return [{ type: 'BOOKMARK', resourceVersion: response.header.revision }];
    const events: WatchEvent[] = [];
    for (const event of response.events) {
      const key = event.kv.key.toString();
      if (event.type === 'Delete') {
        // The deleted object is the previous value (etcd sends it since we ask for prev_kv);
        // its resourceVersion becomes the deletion revision, as in Kubernetes.
        const previous = event.prev_kv ? this.#decode(resource, event.prev_kv) : undefined;
        const object = previous instanceof BerthError || previous === undefined ? undefined : previous;
        events.push({
          type: 'DELETED',
          object: this.#stub(resource, key, event.kv.mod_revision, object),
        });
        continue;
      }
      const object = this.#decode(resource, event.kv);
      if (object instanceof BerthError) {
        // A list skips such a value, so to a watcher the object is gone (as a re-list would show).
        this.#logger.warn({ key, err: object }, 'unreadable object in watch; reporting it deleted');
        events.push({ type: 'DELETED', object: this.#stub(resource, key, event.kv.mod_revision, undefined) });
        continue;
      }
      const created = event.kv.create_revision === event.kv.mod_revision;
      events.push({ type: created ? 'ADDED' : 'MODIFIED', object });
    }
    return events;
  }

  /** The object to report for a deletion: the last known one, or one built from the key. */
  #stub(resource: ObjectResource, key: string, revision: string, last: KubeObject | undefined): KubeObject {
    const { namespace, name } = this.#parseKey(resource, key);
    const base = last ?? { apiVersion: 'v1', kind: KINDS[resource], metadata: { name, namespace } };
    return { ...base, metadata: { ...base.metadata, name, namespace, resourceVersion: revision } };
  }

  /** Decides what a failed watch means: a compacted start revision, or some other failure. */
  async #watchFailure(err: Error, description: string, fromRevision: string): Promise<BerthError> {
    // etcd cancels a watch whose start revision was compacted with an empty cancel reason, which
    // etcd3 surfaces as a bare "Watcher canceled" error. A read at that revision tells for sure.
    try {
      await this.#client.kv.range({
        key: Buffer.from(this.prefix),
        revision: fromRevision,
        count_only: true,
      });
    } catch (probe) {
      if (/compacted/i.test(errorMessage(probe))) {
        return new BerthError(
          'BERTH_RESOURCE_VERSION_TOO_OLD',
          `etcd watch on ${description}: revision ${fromRevision} has been compacted; re-list`,
          { cause: err },
        );
      }
    }
    return new BerthError('BERTH_SOURCE_FAILED', `etcd watch on ${description} failed: ${err.message}`, {
      cause: err,
    });
  }

  /** Cancels an etcd watcher, waiting (bounded) for etcd to confirm so no server-side watcher is left. */
  async #cancel(watcher: Watcher, description: string): Promise<void> {
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.#clock.setTimeout(() => resolve('timeout'), CANCEL_TIMEOUT_MS);
    });
    try {
      const outcome = await Promise.race([watcher.cancel().then(() => 'cancelled' as const), timeout]);
      if (outcome === 'timeout') {
        this.#logger.warn({ watch: description }, 'etcd did not confirm the watch cancellation in time');
      }
    } catch (err) {
      this.#logger.warn({ watch: description, err }, 'cancelling etcd watch failed');
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
  }

  /** Parses a stored value, or returns (not throws) the error that describes why it is unusable. */
  #decode(resource: ObjectResource, kv: IKeyValue): KubeObject | BerthError {
    const key = kv.key.toString();
    let value: unknown;
    try {
      value = JSON.parse(kv.value.toString('utf8'));
    } catch (err) {
      return new BerthError(
        'BERTH_UNEXPECTED_OBJECT_TYPE',
        `unexpected object type at etcd key ${key}: not JSON`,
        {
          cause: err,
        },
      );
    }
    if (!isRecord(value) || !isRecord(value.metadata)) {
      return new BerthError(
        'BERTH_UNEXPECTED_OBJECT_TYPE',
        `unexpected object type at etcd key ${key}: not an object with metadata`,
      );
    }
    const { namespace, name } = this.#parseKey(resource, key);
    const object = withKind(resource, value as KubeObject);
    return { ...object, metadata: { ...object.metadata, name, namespace, resourceVersion: kv.mod_revision } };
  }

  #parseKey(resource: ObjectResource, key: string): { namespace: string; name: string } {
    const rest = key.slice(`${this.prefix}${resource}/`.length);
    const slash = rest.indexOf('/');
    return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  }

  #namespacePrefix(resource: ObjectResource, namespace: string): string {
    checkResource(resource);
    checkSegment('namespace', namespace);
    return `${this.prefix}${resource}/${namespace}/`;
  }

  #key(resource: ObjectResource, namespace: string, name: unknown): string {
    checkSegment('name', name);
    return `${this.#namespacePrefix(resource, namespace)}${name}`;
  }

  /** Runs one etcd call, mapping failures to BERTH_SOURCE_FAILED and honouring an abort signal. */
  async #call<T>(what: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    if (signal?.aborted)
      throw new BerthError('BERTH_ABORTED', `etcd ${what}: aborted`, { cause: signal.reason });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(new BerthError('BERTH_ABORTED', `etcd ${what}: aborted`, { cause: signal?.reason }));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([call(), aborted]);
    } catch (err) {
      throw BerthError.from(err, 'BERTH_SOURCE_FAILED', `etcd ${what} failed`);
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  #checkOpen(): void {
    if (this.#closing.signal.aborted) throw new BerthError('BERTH_SHUT_DOWN', 'etcd source is stopped');
  }
}

function rangeRequest(range: Range): { key: Buffer; range_end: Buffer } {
  return { key: range.start, range_end: range.end };
}

/** etcd watches start at a revision inclusive; a resourceVersion means "after this one". */
function nextRevision(resourceVersion: string): string {
  if (!/^\d+$/.test(resourceVersion)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `etcd watch needs a numeric resourceVersion, got "${resourceVersion}"`,
    );
  }
  return (BigInt(resourceVersion) + 1n).toString();
}

function withKind(resource: ObjectResource, obj: KubeObject): KubeObject {
  return { ...obj, apiVersion: obj.apiVersion ?? 'v1', kind: obj.kind ?? KINDS[resource] };
}

function singular(resource: ObjectResource): string {
  return resource === 'secrets' ? 'secret' : 'configmap';
}

function checkResource(resource: string): asserts resource is ObjectResource {
  if (!(RESOURCES as readonly string[]).includes(resource)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `unknown object resource "${resource}" (secrets, configmaps)`,
    );
  }
}

function checkSegment(what: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '' || value.includes('/')) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `object ${what} must be a non-empty string without "/", got ${JSON.stringify(value)}`,
    );
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
