/** The face of core/kube: what other folders may use; everything else in the folder is private to it. */
export { apiMessage, createKubeClients, isApiConflict, isApiNotFound, type KubeClients, mergePatch, strategicMergePatch } from './client.ts';
export { ceilDiv, parseQuantity, type Quantity, quantityMilliValue, quantityValue } from './quantity.ts';
