/**
 * Names of the DRA services (k8s.io/kubelet/pkg/apis/dra and dra-health) that code
 * choosing among a plugin's registered versions needs without loading the protocol
 * code (sockets/dra.ts, dra-v1beta1.ts, dra-health.ts load grpc-js and the generated code).
 */

/** The name a DRA driver lists in its registration's `supported_versions` when it serves the health stream. */
export const DRA_RESOURCE_HEALTH_SERVICE = 'v1alpha1.DRAResourceHealth';
