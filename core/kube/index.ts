/** The face of core/kube: what other folders may use; everything else in the folder is private to it. */
export { apiError, apiMessage, createKubeClients, isApiConflict, isApiNotFound, type KubeClients, mergePatch, strategicMergePatch } from './client.ts';
export { ceilDiv, milliCpu, parseQuantity, type Quantity, quantityMilliValue, quantityUnits, quantityValue } from '../quantity/index.ts';
