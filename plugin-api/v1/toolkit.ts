/**
 * nodelet provider toolkit, version 1: helpers for writing a provider, apart
 * from the contract (`@nodelet/plugin-api/v1`). Nothing here is required;
 * a provider may use any of it or none:
 *
 *   import { runStateMachine, podStates, CriLogWriter } from '@nodelet/plugin-api/v1/toolkit';
 *
 * - the state-machine toolkit (`runStateMachine`, `defineState`, `podStates`,
 *   `podLifecycleFromMachine`): most of a whole-pod provider;
 * - the CRI log format (`CriLogWriter`, `parseCriLine`, …) and
 *   `CRI_LOG_MODULE_URL`, its plain-JavaScript implementation for worker threads.
 */
export * from './state-machine.ts';
export * from './pod-states.ts';
export * from './machine-pods.ts';
export * from './cri-log.ts';
