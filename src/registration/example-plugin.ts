/**
 * The kubelet's example test plugin (pluginwatcher/example_plugin.go) in
 * berth form: a registration server that reports a fixed type, name, endpoint
 * and versions, and serves the example v1beta1/v1beta2 APIs so the example
 * handler can call them after registering it.
 */

import { EXAMPLE_VERSIONS } from './registration-options.js';
import {
  RegistrationServer,
  type RegistrationServerBehaviour,
  type RegistrationServerOptions,
} from './registration-server.js';
import type { ExampleVersion } from './wire.js';

export interface ExamplePluginOptions {
  socketPath: string;
  name: string;
  type: string;
  /** What GetInfo reports as the endpoint. Default '' (the registrar then uses the socket path). */
  endpoint?: string;
  versions: string[];
  /** Example APIs served. Default: both v1beta1 and v1beta2. */
  services?: ExampleVersion[];
  behaviour?: RegistrationServerBehaviour;
}

export class ExamplePlugin extends RegistrationServer {
  readonly name: string;
  readonly type: string;
  readonly endpoint: string;
  readonly versions: readonly string[];

  constructor(options: ExamplePluginOptions) {
    const endpoint = options.endpoint ?? '';
    const versions = [...options.versions];
    const serverOptions: RegistrationServerOptions = {
      socketPath: options.socketPath,
      info: () => ({ type: options.type, name: options.name, endpoint, supportedVersions: [...versions] }),
      services: options.services ?? [...EXAMPLE_VERSIONS],
    };
    if (options.behaviour !== undefined) serverOptions.behaviour = options.behaviour;
    super(serverOptions);
    this.name = options.name;
    this.type = options.type;
    this.endpoint = endpoint;
    this.versions = versions;
  }
}

export function createExamplePlugin(options: ExamplePluginOptions): ExamplePlugin {
  return new ExamplePlugin(options);
}
