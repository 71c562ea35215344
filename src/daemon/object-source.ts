import { type Clock, type Logger, loadOptionalPackage } from '../common/index.js';
import type { ObjectSource } from '../objects/index.js';
import type { ObjectSourceConfig } from './config/config.js';

type DirectorySourceFactory = typeof import('../objects/index.js')['createDirectorySource'];

/**
 * The object source the config names: the embedded directory (default), etcd,
 * or a Kubernetes API server. The etcd and Kubernetes clients are imported
 * only when configured (each takes 0.5-1 s to load); they are optional peer
 * dependencies, so a missing one fails start with the install command.
 */
export async function createConfiguredSource(
  createDirectorySource: DirectorySourceFactory,
  config: ObjectSourceConfig,
  clock: Clock,
  logger: Logger,
): Promise<ObjectSource> {
  switch (config.type) {
    case 'directory':
      return createDirectorySource({ root: config.root, logger, clock });
    case 'etcd': {
      const { createEtcdSource } = await loadOptionalPackage(
        'etcd3',
        'objects.source type etcd',
        () => import('../objects/etcd.js'),
      );
      // TLS and user/password come through the same client factory as the cluster view's.
      const secured = config.tls !== undefined || config.auth !== undefined;
      const client = secured
        ? (
            await loadOptionalPackage('etcd3', 'objects.source type etcd', () => import('../cluster/etcd.js'))
          ).createEtcdClient({
            endpoints: config.endpoints,
            ...(config.tls === undefined ? {} : { tls: config.tls }),
            ...(config.auth === undefined ? {} : { auth: config.auth }),
          })
        : undefined;
      return createEtcdSource({
        ...(client === undefined ? {} : { client, ownsClient: true }),
        endpoints: config.endpoints,
        ...(config.prefix === undefined ? {} : { prefix: config.prefix }),
        logger,
        clock,
      });
    }
    case 'kubernetes': {
      const { createKubernetesSource } = await loadOptionalPackage(
        '@kubernetes/client-node',
        'objects.source type kubernetes',
        () => import('../objects/kubernetes.js'),
      );
      return createKubernetesSource({ kubeConfig: { kubeconfigPath: config.kubeconfig }, logger });
    }
  }
}
