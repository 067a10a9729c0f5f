/**
 * The face of core/quantity: Kubernetes resource quantities. Its own folder (not core/kube) so
 * that flag parsing (`nodelet --help`, core/config) does not load the API client library.
 */
export { ceilDiv, milliCpu, parseQuantity, type Quantity, quantityMilliValue, quantityUnits, quantityValue } from './quantity.ts';
