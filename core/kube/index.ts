/** The face of core/kube: what other folders may use; everything else in the folder is private to it. */
export { apiError, apiMessage, apiStatus, createKubeClients, isApiConflict, isApiNotFound, type KubeClients, withTimeout } from './client.ts';
export { mergePatch, strategicMergePatch } from './api-groups.ts';
export { ApiTransport, type ClientCredentials } from './api-transport.ts';
export { KubeConfig, type Cluster } from './kubeconfig.ts';
export { newAgent, redirectInterceptor, request, type Agent } from './undici.ts';
export { ListWatch } from './list-watch.ts';
export { MicroTime } from './micro-time.ts';
export { ceilDiv, milliCpu, parseQuantity, type Quantity, quantityMilliValue, quantityUnits, quantityValue } from '../quantity/index.ts';
