import type { Clock, Logger } from '../common/index.js';
import type { ObjectSource } from '../objects/index.js';
import type { ObjectSourceConfig } from './config.js';

type SourceFactories = Pick<
  typeof import('../objects/index.js'),
  'createDirectorySource' | 'createEtcdSource' | 'createKubernetesSource'
>;

/** The object source the config names: the embedded directory (default), etcd, or a Kubernetes API server. */
export function createConfiguredSource(
  { createDirectorySource, createEtcdSource, createKubernetesSource }: SourceFactories,
  config: ObjectSourceConfig,
  clock: Clock,
  logger: Logger,
): ObjectSource {
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
