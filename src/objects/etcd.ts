/** Entry point of the etcd object source (package subpath berth/objects/etcd); see index.ts for why it is separate. */
export {
  createEtcdSource,
  DEFAULT_ETCD_PREFIX,
  type EtcdSource,
  type EtcdSourceOptions,
} from './sources/etcd-source.js';
