/**
 * The CSI volume manager: what Nomad's csimanager and the kubelet's CSI
 * volume plugin do on a node, for any workload runner. It creates and
 * deletes volumes on a driver's controller, and for each (volume, workload)
 * runs ControllerPublish (once per volume, with PUBLISH_UNPUBLISH_VOLUME),
 * NodeStage (once per volume, with STAGE_UNSTAGE_VOLUME) and NodePublish,
 * and their negations in reverse when the last workload goes.
 *
 * Rules it keeps (see docs and the reference's "must not do" list):
 * - one operation per volume at a time, each under a deadline;
 * - reference counts come from the durable store, never start empty;
 * - a publication is recorded before NodePublish is sent, so an unknown
 *   outcome (timeout, crash) still gets its unpublish;
 * - berth creates the staging dir and the target's parent, never the target;
 *   it removes a dir only when it is not a mount point;
 * - a failed publish undoes what it did itself (stage, controller publish,
 *   dirs) when no other workload holds the volume: no mount is left behind.
 */
import { mkdirSync, rmdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BerthError, type Clock, errorMessage, LifecycleComponent, type Logger } from '../common/index.js';
import {
  CSI_ACCESS_MODES,
  CSI_RETRY_AFTER_SECONDS,
  type CsiAccessMode,
  type CsiMountCapability,
  type CsiVolumeClient,
  type CsiVolumeStats,
  openCsiVolumeClient,
} from '../handlers/csi/index.js';
import { type MountTable, readMountTable } from './mount-table.js';
import type {
  CreatedVolumeView,
  CreateVolumeRequest,
  CsiDriverDirectory,
  CsiDriverEndpoint,
  PublicationStatus,
  PublicationView,
  PublishOptions,
  PublishRequest,
  PublishResult,
  VolumeView,
} from './types.js';
import { checkPathComponent, type VolumePaths, volumePaths } from './volume-paths.js';
import { VolumeQueue } from './volume-queue.js';
import {
  type StoredAttachment,
  type StoredPublication,
  type StoredVolume,
  VolumeStore,
} from './volume-store.js';

export interface VolumeManagerOptions {
  /** The SQLite file of volume state (`<data-dir>/csi-volumes.db`). */
  statePath: string;
  /** Root of staging and publish paths (`<data-dir>/csi` unless configured). */
  mountRoot: string;
  drivers: CsiDriverDirectory;
  callTimeoutMs: number;
  operationTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Where the mount table is read (tests may point elsewhere); default /proc/self/mountinfo. */
  mountInfoPath?: string;
  /**
   * Observe mode (another registrar, a kubelet, owns the drivers and their volumes): nothing is
   * opened or persisted, the list is empty, and every operation is refused with BERTH_OBSERVE_ONLY.
   */
  observe?: boolean;
}

/** Bounds of one request's maps and lists (checked before any call). */
const MAX_MAP_ENTRIES = 64;
const MAX_MAP_TEXT_BYTES = 4096;
const MAX_MOUNT_FLAGS = 32;
/** NodeGetVolumeStats is informative: a list waits at most this long per volume. */
const STATS_TIMEOUT_MS = 5_000;

const keyOf = (driver: string, volumeId: string) => `${driver}\0${volumeId}`;

/** One step of undoing a failed publish; `perVolume` steps (unstage, controller unpublish) need the volume idle. */
interface UndoStep {
  perVolume: boolean;
  /** `cause`: the failure being undone. */
  run(cause: unknown): Promise<void>;
}

const volumeStep = (run: () => Promise<void>): UndoStep => ({ perVolume: true, run });

export class VolumeManager extends LifecycleComponent {
  readonly #options: VolumeManagerOptions;
  readonly #logger: Logger;
  readonly #paths: VolumePaths;
  readonly #queue = new VolumeQueue();
  readonly #inFlight = new Set<Promise<unknown>>();
  // Stopping aborts the calls in flight (their state stays recorded), waits for them, then closes the store.
  #store: VolumeStore | undefined;
  readonly #volumes = new Map<string, StoredVolume>();
  readonly #attachments = new Map<string, StoredAttachment>();
  /** Per volume key: workload → publication. */
  readonly #publications = new Map<string, Map<string, StoredPublication>>();

  constructor(options: VolumeManagerOptions) {
    super();
    this.#options = options;
    this.#logger = options.logger.child({ component: 'csi-volumes' });
    this.#paths = volumePaths(options.mountRoot);
  }

  protected override onStart(): Promise<void> | void {
    return this.#open();
  }

  protected override async onStop(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
    this.#store?.close();
  }

  get mountRoot(): string {
    return this.#options.mountRoot;
  }

  #open(): void {
    if (this.#options.observe === true) return;
    mkdirSync(this.#options.mountRoot, { recursive: true, mode: 0o750 });
    const store = new VolumeStore(this.#options.statePath);
    this.#store = store;
    const loaded = store.load();
    for (const problem of loaded.problems) {
      this.#logger.warn(
        { problem },
        'a CSI volume record could not be read; it is kept in the file and skipped',
      );
    }
    for (const v of loaded.volumes) this.#volumes.set(keyOf(v.driver, v.volumeId), v);
    for (const a of loaded.attachments) this.#attachments.set(keyOf(a.driver, a.volumeId), a);
    for (const p of loaded.publications) this.#publicationsOf(p.driver, p.volumeId).set(p.workload, p);
    const mounts = this.#mounts();
    for (const p of loaded.publications) {
      const status = this.#status(p, mounts);
      if (status !== 'published') {
        this.#logger.warn(
          { driver: p.driver, volumeId: p.volumeId, workload: p.workload, targetPath: p.targetPath, status },
          'a recorded CSI publication is not mounted: publish it again to repair it, or unpublish it',
        );
      }
    }
    if (loaded.publications.length > 0) {
      this.#logger.info({ publications: loaded.publications.length }, 'CSI publications restored');
    }
  }

  /** Runs one operation of the API, tracked so stop() waits for it. */
  #track<T>(operation: Promise<T>): Promise<T> {
    this.#inFlight.add(operation);
    void operation.then(
      () => this.#inFlight.delete(operation),
      () => this.#inFlight.delete(operation),
    );
    return operation;
  }

  // ---- create / delete --------------------------------------------------------------------

  async create(request: CreateVolumeRequest): Promise<CreatedVolumeView> {
    this.#requireStore();
    const driver = checkPathComponent('driver', request.driver);
    const name = checkName('name', request.name);
    const capability = mountCapability(request.accessMode, request.fsType, []);
    const parameters = checkMap('parameters', request.parameters);
    const capacityBytes = request.capacityBytes;
    if (capacityBytes !== undefined && (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0)) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        'capacityBytes: expected a whole number of bytes, 0 or more',
      );
    }
    const deadline = this.#deadline();
    // Keyed by name: two creates of one name do not race each other on the driver.
    return this.#track(
      this.#queue.run(`create\0${driver}\0${name}`, deadline, `create ${name}`, async () => {
        const client = await this.#client(driver, this.#requireController(driver), deadline);
        try {
          const caps = await client.controllerCapabilities();
          requireCapability(driver, caps, 'CREATE_DELETE_VOLUME', 'Controller', 'create volumes');
          const created = await client.createVolume({ name, capacityBytes, parameters, capability });
          checkPathComponent(`the volume id driver ${driver} returned`, created.volumeId);
          const stored: StoredVolume = {
            driver,
            volumeId: created.volumeId,
            name,
            capacityBytes: created.capacityBytes,
            volumeContext: created.volumeContext,
            accessibleTopology: created.accessibleTopology,
            createdAt:
              this.#volumes.get(keyOf(driver, created.volumeId))?.createdAt ?? this.#options.clock.now(),
          };
          this.#requireStore().putVolume(stored);
          this.#volumes.set(keyOf(driver, created.volumeId), stored);
          return { driver, ...created };
        } finally {
          client.close();
        }
      }),
    );
  }

  async delete(driverName: string, volumeIdIn: string): Promise<{ driver: string; volumeId: string }> {
    this.#requireStore();
    const driver = checkPathComponent('driver', driverName);
    const volumeId = checkPathComponent('volumeId', volumeIdIn);
    const key = keyOf(driver, volumeId);
    const deadline = this.#deadline();
    return this.#track(
      this.#queue.run(key, deadline, `delete ${volumeId}`, async () => {
        if (!this.#volumes.has(key) && !this.#attachments.has(key) && !this.#publications.has(key)) {
          this.#requireKnownDriver(driver, true);
          throw new BerthError(
            'BERTH_CSI_VOLUME_NOT_FOUND',
            `volume ${volumeId} of CSI driver ${driver} is not known to berth; list volumes with GET /v1/csi/volumes`,
          );
        }
        const workloads = [...(this.#publications.get(key)?.keys() ?? [])];
        if (workloads.length > 0 || this.#attachments.has(key)) {
          throw new BerthError(
            'BERTH_CSI_CONFLICT',
            workloads.length > 0
              ? `volume ${volumeId} of CSI driver ${driver} is published for ${workloads.join(', ')}; unpublish it first`
              : `volume ${volumeId} of CSI driver ${driver} is still staged or controller-published on this node; unpublish it first`,
          );
        }
        const client = await this.#client(driver, this.#requireController(driver), deadline);
        try {
          const caps = await client.controllerCapabilities();
          requireCapability(driver, caps, 'CREATE_DELETE_VOLUME', 'Controller', 'delete volumes');
          await client.deleteVolume(volumeId);
          this.#requireStore().deleteVolume(driver, volumeId);
          this.#volumes.delete(key);
          return { driver, volumeId };
        } finally {
          client.close();
        }
      }),
    );
  }

  // ---- publish / unpublish ----------------------------------------------------------------

  async publish(
    driverName: string,
    volumeIdIn: string,
    request: PublishRequest,
    ephemeral = false,
  ): Promise<PublishResult> {
    this.#requireStore();
    const driver = checkPathComponent('driver', driverName);
    const volumeId = checkPathComponent('volumeId', volumeIdIn);
    const workload = checkPathComponent('workload', request.workload);
    const options = publishOptions(request, ephemeral);
    const key = keyOf(driver, volumeId);
    const deadline = this.#deadline();
    return this.#track(
      this.#queue.run(key, deadline, `publish ${volumeId} for ${workload}`, async () => {
        const existing = this.#publications.get(key)?.get(workload);
        if (existing !== undefined && !sameOptions(existing.options, options)) {
          throw new BerthError(
            'BERTH_CSI_CONFLICT',
            `volume ${volumeId} of CSI driver ${driver} is already published for ${workload} with other options (${describeOptions(existing.options)}); unpublish it first`,
          );
        }
        const mounts = this.#mounts();
        if (existing !== undefined && this.#status(existing, mounts) === 'published') {
          return this.#result(existing); // idempotent
        }
        const endpoint = this.#requireDriver(driver);
        const client = await this.#client(driver, endpoint, deadline);
        try {
          return await this.#publish(client, driver, volumeId, workload, options, endpoint.nodeId, existing);
        } finally {
          client.close();
        }
      }),
    );
  }

  async #publish(
    client: CsiVolumeClient,
    driver: string,
    volumeId: string,
    workload: string,
    options: PublishOptions,
    nodeId: string,
    existing: StoredPublication | undefined,
  ): Promise<PublishResult> {
    const key = keyOf(driver, volumeId);
    const store = this.#requireStore();
    const nodeCaps = await client.nodeCapabilities();
    // The kubelet neither controller-publishes nor stages an ephemeral inline volume.
    const controllerCaps = options.ephemeral ? [] : await client.controllerCapabilities();
    const stages = !options.ephemeral && nodeCaps.includes('STAGE_UNSTAGE_VOLUME');
    const capability: CsiMountCapability = {
      accessMode: options.accessMode,
      fsType: options.fsType,
      mountFlags: options.mountFlags,
    };
    const before = this.#attachments.get(key);
    const attachment: StoredAttachment = before
      ? { ...before }
      : { driver, volumeId, nodeId, controllerPublished: false, publishContext: {}, stagingPath: null };
    const undo: UndoStep[] = [];
    const targetPath = this.#paths.target(driver, workload, volumeId);
    try {
      if (controllerCaps.includes('PUBLISH_UNPUBLISH_VOLUME') && !attachment.controllerPublished) {
        const unpublishStep = volumeStep(async () => {
          await client.controllerUnpublish(volumeId, attachment.nodeId);
          attachment.controllerPublished = false;
          attachment.publishContext = {};
          this.#putAttachment(attachment);
        });
        try {
          attachment.publishContext = await client.controllerPublish({
            volumeId,
            nodeId: attachment.nodeId,
            capability,
            readOnly: options.readOnly,
            volumeContext: options.volumeContext,
          });
        } catch (err) {
          // An unknown outcome may have attached it: send the negation (the spec's advice).
          if (isUncertain(err)) undo.push(unpublishStep);
          throw err;
        }
        attachment.controllerPublished = true;
        this.#putAttachment(attachment);
        undo.push(unpublishStep);
      } else if (!this.#attachments.has(key)) {
        this.#putAttachment(attachment);
      }
      const stagingPath = this.#paths.staging(driver, volumeId);
      // Staged once per volume; again only to repair a publication whose mounts vanished (NodeStage is idempotent).
      if (stages && (attachment.stagingPath === null || existing !== undefined)) {
        const freshStage = attachment.stagingPath === null;
        const madeDir = makeDir(stagingPath);
        if (freshStage) {
          undo.push(
            volumeStep(async () => {
              if (attachment.stagingPath !== null) {
                await client.nodeUnstage(volumeId, stagingPath);
                attachment.stagingPath = null;
                this.#putAttachment(attachment);
              }
              if (madeDir) this.#removeDir(stagingPath);
            }),
          );
        }
        try {
          await client.nodeStage({
            volumeId,
            publishContext: attachment.publishContext,
            stagingPath,
            capability,
            volumeContext: options.volumeContext,
          });
        } catch (err) {
          // An unknown outcome may have staged: keep the path so the undo unstages.
          if (freshStage && isUncertain(err)) {
            attachment.stagingPath = stagingPath;
            this.#putAttachment(attachment);
          }
          throw err;
        }
        attachment.stagingPath = stagingPath;
        this.#putAttachment(attachment);
      }
      const workloadDir = this.#paths.workloadDir(driver, workload);
      const madeParent = makeDir(workloadDir);
      const publication: StoredPublication = {
        driver,
        volumeId,
        workload,
        targetPath,
        options,
        state: 'pending',
        publishedAt: existing?.publishedAt ?? this.#options.clock.now(),
      };
      // Recorded before the call: whatever happens next, an unpublish will be sent for it.
      store.putPublication(publication);
      this.#publicationsOf(driver, volumeId).set(workload, publication);
      undo.push({
        perVolume: false,
        run: async (cause) => {
          // The negation goes out when the target is mounted, or when the outcome is unknown.
          if (isUncertain(cause) || this.#mounts().isMountPoint(targetPath)) {
            await client.nodeUnpublish(volumeId, targetPath);
          }
          if (this.#mounts().isMountPoint(targetPath)) {
            throw new BerthError(
              'BERTH_CSI_DRIVER_FAILED',
              `${targetPath} is still mounted after NodeUnpublishVolume`,
            );
          }
          this.#removeDir(targetPath);
          if (existing === undefined) {
            this.#forgetPublication(driver, volumeId, workload);
            if (madeParent) this.#removeDir(workloadDir);
          }
        },
      });
      await client.nodePublish({
        volumeId,
        publishContext: attachment.publishContext,
        stagingPath: stages ? stagingPath : '',
        targetPath,
        capability,
        readOnly: options.readOnly,
        volumeContext: options.volumeContext,
      });
      publication.state = 'published';
      store.putPublication(publication);
      return this.#result(publication);
    } catch (err) {
      await this.#rollback(driver, volumeId, workload, undo, err);
      this.#dropIdleAttachment(driver, volumeId);
      throw err;
    }
  }

  /**
   * Undoes a failed publish newest first. Stage and controller publish are
   * undone only when no other workload holds the volume; a step that fails
   * stops the rest (their state stays recorded for a later unpublish).
   */
  async #rollback(
    driver: string,
    volumeId: string,
    workload: string,
    undo: UndoStep[],
    cause: unknown,
  ): Promise<void> {
    const key = keyOf(driver, volumeId);
    for (const step of [...undo].reverse()) {
      if (step.perVolume && this.#publications.has(key)) break;
      try {
        await step.run(cause);
      } catch (err) {
        this.#logger.warn(
          { driver, volumeId, workload, err, cause: errorMessage(cause) },
          'undoing a failed CSI publish failed; its state stays recorded for a later unpublish',
        );
        break;
      }
    }
  }

  async unpublish(driverName: string, volumeIdIn: string, workloadIn: string): Promise<PublishResult> {
    this.#requireStore();
    const driver = checkPathComponent('driver', driverName);
    const volumeId = checkPathComponent('volumeId', volumeIdIn);
    const workload = checkPathComponent('workload', workloadIn);
    const key = keyOf(driver, volumeId);
    const deadline = this.#deadline();
    return this.#track(
      this.#queue.run(key, deadline, `unpublish ${volumeId} for ${workload}`, async () => {
        const publication = this.#publications.get(key)?.get(workload);
        const attachment = this.#attachments.get(key);
        const leftover =
          publication === undefined && attachment !== undefined && !this.#publications.has(key);
        if (publication === undefined && !leftover) {
          if (!this.#volumes.has(key)) this.#requireKnownDriver(driver);
          throw new BerthError(
            'BERTH_CSI_VOLUME_NOT_FOUND',
            `volume ${volumeId} of CSI driver ${driver} is not published for ${workload}; list publications with GET /v1/csi/volumes`,
          );
        }
        // Waits for the driver to come back: 503 with Retry-After while it is away; nothing is forgotten.
        const endpoint = this.#requireDriver(driver);
        const client = await this.#client(driver, endpoint, deadline);
        try {
          const result: PublishResult = publication
            ? this.#result(publication)
            : {
                driver,
                volumeId,
                workload,
                targetPath: this.#paths.target(driver, workload, volumeId),
                stagingPath: null,
              };
          if (publication !== undefined) {
            await client.nodeUnpublish(volumeId, publication.targetPath).catch((err: unknown) => {
              // NotFound for a target that is not mounted: already gone (as Nomad and the spec allow).
              if (
                isBerthCode(err, 'BERTH_CSI_VOLUME_NOT_FOUND') &&
                !this.#mounts().isMountPoint(publication.targetPath)
              )
                return;
              throw err;
            });
            if (this.#mounts().isMountPoint(publication.targetPath)) {
              throw new BerthError(
                'BERTH_CSI_DRIVER_FAILED',
                `CSI NodeUnpublishVolume on driver ${driver} succeeded but ${publication.targetPath} is still mounted`,
              );
            }
            this.#removeDir(publication.targetPath);
            this.#removeDir(dirname(publication.targetPath));
            this.#forgetPublication(driver, volumeId, workload);
          }
          if (!this.#publications.has(key)) await this.#detach(client, driver, volumeId);
          return result;
        } finally {
          client.close();
        }
      }),
    );
  }

  /** The last workload went: NodeUnstage, then ControllerUnpublish (the spec's order), then forget. */
  async #detach(client: CsiVolumeClient, driver: string, volumeId: string): Promise<void> {
    const key = keyOf(driver, volumeId);
    const attachment = this.#attachments.get(key);
    if (attachment === undefined) return;
    if (attachment.stagingPath !== null) {
      const stagingPath = attachment.stagingPath;
      await client.nodeUnstage(volumeId, stagingPath).catch((err: unknown) => {
        if (isBerthCode(err, 'BERTH_CSI_VOLUME_NOT_FOUND') && !this.#mounts().isMountPoint(stagingPath))
          return;
        throw err;
      });
      if (this.#mounts().isMountPoint(stagingPath)) {
        throw new BerthError(
          'BERTH_CSI_DRIVER_FAILED',
          `CSI NodeUnstageVolume on driver ${driver} succeeded but ${stagingPath} is still mounted`,
        );
      }
      this.#removeDir(stagingPath);
      this.#putAttachment({ ...attachment, stagingPath: null });
    }
    if (attachment.controllerPublished) {
      await client.controllerUnpublish(volumeId, attachment.nodeId).catch((err: unknown) => {
        // NotFound: the volume or node is gone, so it is not attached (Nomad treats it as done too).
        if (!isBerthCode(err, 'BERTH_CSI_VOLUME_NOT_FOUND')) throw err;
      });
    }
    this.#requireStore().deleteAttachment(driver, volumeId);
    this.#attachments.delete(key);
  }

  // ---- list -------------------------------------------------------------------------------

  async list(): Promise<VolumeView[]> {
    const keys = new Set([
      ...this.#volumes.keys(),
      ...this.#attachments.keys(),
      ...this.#publications.keys(),
    ]);
    const mounts = this.#mounts();
    const views: VolumeView[] = [];
    const nodeCaps = new Map<string, Promise<string[]>>();
    for (const key of [...keys].sort()) {
      const [driver = '', volumeId = ''] = key.split('\0');
      const volume = this.#volumes.get(key);
      const attachment = this.#attachments.get(key);
      const publications = [...(this.#publications.get(key)?.values() ?? [])].sort((a, b) =>
        a.workload.localeCompare(b.workload),
      );
      const registered = this.#options.drivers.lookup(driver);
      const view: VolumeView = {
        driver,
        volumeId,
        name: volume?.name ?? null,
        capacityBytes: volume?.capacityBytes ?? null,
        volumeContext: volume?.volumeContext ?? {},
        createdAt: volume?.createdAt ?? null,
        driverRegistered: registered !== undefined,
        controllerPublished: attachment?.controllerPublished ?? false,
        staging:
          attachment?.stagingPath == null
            ? null
            : { path: attachment.stagingPath, mounted: mounts.isMountPoint(attachment.stagingPath) },
        publications: publications.map((p) => this.#view(p, mounts)),
        stats: null,
        statsError: null,
      };
      const target = publications.find((p) => mounts.isMountPoint(p.targetPath))?.targetPath;
      if (registered !== undefined && target !== undefined && !this.#queue.busy(key)) {
        try {
          const stats = await this.#stats(
            registered.endpoint,
            driver,
            volumeId,
            target,
            attachment,
            nodeCaps,
          );
          view.stats = stats;
        } catch (err) {
          view.statsError = errorMessage(err);
        }
      }
      views.push(view);
    }
    return views;
  }

  async #stats(
    endpoint: string,
    driver: string,
    volumeId: string,
    target: string,
    attachment: StoredAttachment | undefined,
    nodeCaps: Map<string, Promise<string[]>>,
  ): Promise<CsiVolumeStats | null> {
    const deadline = Date.now() + Math.min(STATS_TIMEOUT_MS, this.#options.callTimeoutMs);
    const client = await openCsiVolumeClient(driver, endpoint, { callTimeoutMs: STATS_TIMEOUT_MS, deadline });
    try {
      let caps = nodeCaps.get(driver);
      if (caps === undefined) {
        caps = client.nodeCapabilities();
        nodeCaps.set(driver, caps);
      }
      if (!(await caps).includes('GET_VOLUME_STATS')) return null;
      return await client.nodeVolumeStats(volumeId, target, attachment?.stagingPath ?? '');
    } finally {
      client.close();
    }
  }

  /** The recorded publications of one workload (the pod side uses it to find what it published). */
  publicationsOf(workload: string): PublishResult[] {
    const out: PublishResult[] = [];
    for (const byWorkload of this.#publications.values()) {
      const p = byWorkload.get(workload);
      if (p !== undefined) out.push(this.#result(p));
    }
    return out;
  }

  // ---- helpers ----------------------------------------------------------------------------

  #deadline(): number {
    return Date.now() + this.#options.operationTimeoutMs;
  }

  /** A client for one operation: Controller calls to the controller plugin when it is apart. */
  #client(driver: string, found: CsiDriverEndpoint, deadline: number): Promise<CsiVolumeClient> {
    return openCsiVolumeClient(driver, found.endpoint, {
      callTimeoutMs: this.#options.callTimeoutMs,
      deadline,
      signal: this.lifecycleSignal,
      ...(found.controllerEndpoint === undefined ? {} : { controllerEndpoint: found.controllerEndpoint }),
    });
  }

  #requireStore(): VolumeStore {
    if (this.#options.observe === true) {
      throw new BerthError(
        'BERTH_OBSERVE_ONLY',
        'berth observes these CSI drivers (another registrar, such as the kubelet, owns them and their volumes) and creates, publishes or deletes no volume',
      );
    }
    if (this.#store === undefined || this.state !== 'running') {
      throw new BerthError('BERTH_NOT_READY', 'the CSI volume manager is not running');
    }
    return this.#store;
  }

  /** A driver berth knows of (volumes or publications recorded) but that is away: 503; never seen: 404. */
  #requireKnownDriver(driver: string, controllerWill = false): void {
    if (this.#options.drivers.lookup(driver) !== undefined) return;
    if (controllerWill && this.#options.drivers.lookupController?.(driver) !== undefined) return;
    const known = [...this.#volumes.values(), ...this.#attachments.values()].some((v) => v.driver === driver);
    if (known) {
      throw new BerthError(
        'BERTH_CSI_DRIVER_UNAVAILABLE',
        `CSI driver ${driver} is not registered right now; berth keeps its volumes recorded until it comes back`,
        { details: { driver, retryAfterSeconds: CSI_RETRY_AFTER_SECONDS } },
      );
    }
    throw new BerthError(
      'BERTH_CSI_DRIVER_NOT_FOUND',
      `CSI driver ${driver} is not registered; list drivers with GET /v1/csi/drivers`,
      { details: { driver } },
    );
  }

  #requireDriver(driver: string): CsiDriverEndpoint {
    this.#requireStore();
    this.#requireKnownDriver(driver);
    const found = this.#options.drivers.lookup(driver);
    if (found === undefined) throw new BerthError('BERTH_INTERNAL', `driver ${driver} vanished`);
    return found;
  }

  /** For Controller-only operations (create, delete): the node plugin's registration, or a controller plugin's alone. */
  #requireController(driver: string): CsiDriverEndpoint {
    this.#requireStore();
    this.#requireKnownDriver(driver, true);
    const found = this.#options.drivers.lookup(driver);
    if (found !== undefined) return found;
    const controller = this.#options.drivers.lookupController?.(driver);
    if (controller === undefined) throw new BerthError('BERTH_INTERNAL', `driver ${driver} vanished`);
    return { endpoint: controller, nodeId: '', controllerEndpoint: controller };
  }

  #mounts(): MountTable {
    return readMountTable(this.#options.mountInfoPath);
  }

  #status(p: StoredPublication, mounts: MountTable): PublicationStatus {
    if (p.state === 'pending') return 'uncertain';
    return mounts.isMountPoint(p.targetPath) ? 'published' : 'vanished';
  }

  #view(p: StoredPublication, mounts: MountTable): PublicationView {
    return {
      ...p.options,
      workload: p.workload,
      targetPath: p.targetPath,
      status: this.#status(p, mounts),
      mounted: mounts.isMountPoint(p.targetPath),
      publishedAt: p.publishedAt,
    };
  }

  #result(p: StoredPublication): PublishResult {
    return {
      driver: p.driver,
      volumeId: p.volumeId,
      workload: p.workload,
      targetPath: p.targetPath,
      stagingPath: this.#attachments.get(keyOf(p.driver, p.volumeId))?.stagingPath ?? null,
    };
  }

  #publicationsOf(driver: string, volumeId: string): Map<string, StoredPublication> {
    const key = keyOf(driver, volumeId);
    let map = this.#publications.get(key);
    if (map === undefined) {
      map = new Map();
      this.#publications.set(key, map);
    }
    return map;
  }

  #forgetPublication(driver: string, volumeId: string, workload: string): void {
    this.#requireStore().deletePublication(driver, volumeId, workload);
    const key = keyOf(driver, volumeId);
    const map = this.#publications.get(key);
    map?.delete(workload);
    if (map?.size === 0) this.#publications.delete(key);
  }

  #putAttachment(attachment: StoredAttachment): void {
    this.#requireStore().putAttachment(attachment);
    this.#attachments.set(keyOf(attachment.driver, attachment.volumeId), { ...attachment });
  }

  /** After a failed first publish: an attachment with nothing left to undo is forgotten. */
  #dropIdleAttachment(driver: string, volumeId: string): void {
    const key = keyOf(driver, volumeId);
    const now = this.#attachments.get(key);
    if (now === undefined || this.#publications.has(key)) return;
    if (!now.controllerPublished && now.stagingPath === null) {
      this.#requireStore().deleteAttachment(driver, volumeId);
      this.#attachments.delete(key);
    }
  }

  /** rmdir (not recursive) unless it is a mount point; a missing or non-empty dir is left as is. */
  #removeDir(path: string): void {
    if (this.#mounts().isMountPoint(path)) return;
    try {
      rmdirSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') {
        this.#logger.warn({ path, err }, 'cannot remove a CSI directory');
      }
    }
  }
}

// ---- request checks ---------------------------------------------------------------------------

function checkName(what: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: required (a non-empty string)`);
  }
  if (Buffer.byteLength(value) > 128) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: over the CSI spec's 128-byte bound`);
  }
  return value;
}

function checkMap(what: string, value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: expected an object of strings`);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_MAP_ENTRIES) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}: more than ${MAX_MAP_ENTRIES} entries`);
  }
  let bytes = 0;
  for (const [k, v] of entries) {
    if (typeof v !== 'string')
      throw new BerthError('BERTH_INVALID_ARGUMENT', `${what}.${k}: expected a string`);
    bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (bytes > MAX_MAP_TEXT_BYTES) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${what}: over the CSI spec's ${MAX_MAP_TEXT_BYTES}-byte bound`,
    );
  }
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Record<
    string,
    string
  >;
}

function mountCapability(accessMode: unknown, fsType: unknown, mountFlags: unknown): CsiMountCapability {
  const mode = accessMode ?? 'single-node-writer';
  if (typeof mode !== 'string' || !Object.hasOwn(CSI_ACCESS_MODES, mode)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `accessMode: expected one of ${Object.keys(CSI_ACCESS_MODES).join(', ')}, got ${JSON.stringify(mode)}`,
    );
  }
  if (fsType !== undefined && (typeof fsType !== 'string' || Buffer.byteLength(fsType) > 128)) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'fsType: expected a string of at most 128 bytes');
  }
  if (
    !Array.isArray(mountFlags) ||
    mountFlags.length > MAX_MOUNT_FLAGS ||
    !mountFlags.every((f) => typeof f === 'string' && f !== '') ||
    Buffer.byteLength(mountFlags.join('')) > MAX_MAP_TEXT_BYTES
  ) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `mountFlags: expected at most ${MAX_MOUNT_FLAGS} non-empty strings, ${MAX_MAP_TEXT_BYTES} bytes in all`,
    );
  }
  return { accessMode: mode as CsiAccessMode, fsType: (fsType as string | undefined) ?? '', mountFlags };
}

function publishOptions(request: PublishRequest, ephemeral: boolean): PublishOptions {
  if (request.readOnly !== undefined && typeof request.readOnly !== 'boolean') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'readOnly: expected true or false');
  }
  const capability = mountCapability(request.accessMode, request.fsType, request.mountFlags ?? []);
  return {
    readOnly: request.readOnly ?? false,
    accessMode: capability.accessMode,
    fsType: capability.fsType,
    mountFlags: [...capability.mountFlags],
    volumeContext: checkMap('volumeContext', request.volumeContext),
    ephemeral,
  };
}

function sameOptions(a: PublishOptions, b: PublishOptions): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function describeOptions(o: PublishOptions): string {
  return `readOnly=${o.readOnly} accessMode=${o.accessMode} fsType=${o.fsType || '-'} mountFlags=${o.mountFlags.length}`;
}

function requireCapability(
  driver: string,
  caps: string[],
  capability: string,
  service: string,
  what: string,
): void {
  if (!caps.includes(capability)) {
    throw new BerthError(
      'BERTH_CSI_CAPABILITY_MISSING',
      `CSI driver ${driver} does not offer the ${service} capability ${capability}, needed to ${what}`,
      { details: { driver, capability } },
    );
  }
}

function isBerthCode(err: unknown, code: string): boolean {
  return err instanceof BerthError && err.code === code;
}

/** The outcome is unknown: the driver may have done it (deadline, unavailable, aborted, not a status). */
function isUncertain(err: unknown): boolean {
  return isBerthCode(err, 'BERTH_CSI_DRIVER_UNAVAILABLE') || isBerthCode(err, 'BERTH_CSI_DRIVER_FAILED');
}

/** mkdir -p; true when this call made the last component (so only then does berth remove it). */
function makeDir(path: string): boolean {
  const made = mkdirSync(path, { recursive: true, mode: 0o750 });
  return made !== undefined;
}
