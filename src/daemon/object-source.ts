import type { Clock, Logger } from '../common/index.js';
import {
  createDirectorySource,
  createEtcdSource,
  createKubernetesSource,
  type ObjectSource,
} from '../objects/index.js';
import type { ObjectSourceConfig } from './config.js';

/** The object source the config names: the embedded directory (default), etcd, or a Kubernetes API server. */
export function createConfiguredSource(config: ObjectSourceConfig, clock: Clock, logger: Logger): ObjectSource {
  switch (config.type) {
    case 'directory':
      return createDirectorySource({ root: config.root, logger, clock });
    case 'etcd':
      return createEtcdSource({
        endpoints: config.endpoints,
        ...(config.prefix === undefined ? {} : { prefix: config.prefix }),
        logger,
        clock,
      });
    case 'kubernetes':
      return createKubernetesSource({ kubeConfig: { kubeconfigPath: config.kubeconfig }, logger });
  }
}
