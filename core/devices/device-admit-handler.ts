/**
 * Device plugins at admission: allocating a pod's devices is an admit handler
 * (rejects with UnexpectedAdmissionError when Allocate fails, as upstream),
 * and the device resources join the allocatable the predicates check (never
 * below what is allocated).
 */
import type { AdmitResult, AllocatableContributor, PodAdmitHandler } from '../pods/index.ts';
import type { DeviceManager } from './device-manager.ts';

/** The admit handler that allocates devices; list it before the predicates. */
export function deviceAdmitHandler(manager: Pick<DeviceManager, 'allocate'>): PodAdmitHandler {
  return { name: 'devices', admit: (pod): Promise<AdmitResult> => manager.allocate(pod) };
}

/** Device-plugin resources for the admission predicates. */
export function deviceAllocatable(manager: Pick<DeviceManager, 'admissionAllocatable'>): AllocatableContributor {
  return { allocatable: () => manager.admissionAllocatable() };
}
