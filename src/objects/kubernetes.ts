/** Entry point of the Kubernetes object source (package subpath berth/objects/kubernetes); see index.ts for why it is separate. */
export { createKubernetesSource, type KubernetesSourceOptions } from './sources/kubernetes-source.js';
