import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { API_VERSION, type PodProvider, type Provider } from '@nodelet/plugin-api/v1';
import {
  controllerRouter,
  createRuntimeClassRouter,
  staticRuntimeClasses,
  standaloneRuntimeClasses,
  type RuntimeClassSource,
  type ServedProvider,
} from '../../../core/providers/index.ts';

const container = (name: string, handlers = [name]): ServedProvider & Provider => ({
  name,
  apiVersion: API_VERSION,
  handlers,
  architecture: 'a',
  os: 'o',
  runtimeVersion: `${name}://1`,
  pullImage: () => Promise.reject(new Error('unused')),
  startContainer: () => Promise.reject(new Error('unused')),
});
const podOwner: ServedProvider & PodProvider = {
  name: 'vm',
  apiVersion: API_VERSION,
  handlers: ['vm'],
  architecture: 'a',
  os: 'o',
  runtimeVersion: 'vm://1',
  pods: { createPod: async () => undefined, deletePod: async () => undefined, getPodStatus: () => undefined },
};
const pod = (runtimeClassName?: string): V1Pod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [], runtimeClassName } });
const wasi = container('wasi', ['wasi', 'wasmtime']);
const js = container('js');
const classes = staticRuntimeClasses({ wasi: 'wasi', fast: 'wasmtime', js: 'js', gvisor: 'runsc', vm: 'vm' });
const providers: ServedProvider[] = [wasi, js, podOwner];
const route = createRuntimeClassRouter({ providers, defaultProvider: 'wasi', classes });

describe('runtime class router', () => {
  it('sends pods without a RuntimeClass to the default provider', () => {
    expect(route(pod())).toEqual({ provider: wasi });
  });

  it('sends each pod to the provider serving its class handler', () => {
    expect(route(pod('js'))).toEqual({ provider: js, handler: 'js' });
    expect(route(pod('fast'))).toEqual({ provider: wasi, handler: 'wasmtime' });
  });

  it('rejects an unknown RuntimeClass with upstream NotFound text', () => {
    expect(route(pod('nope'))).toEqual({ reason: 'UnsupportedRuntimeClass', message: 'runtimeclass.node.k8s.io "nope" not found' });
  });

  it('rejects a handler no provider serves, listing the served ones', () => {
    expect(route(pod('gvisor'))).toEqual({
      reason: 'UnsupportedRuntimeClass',
      message: 'RuntimeClass "gvisor" has handler "runsc", which no provider on this node serves (handlers served: js, vm, wasi, wasmtime)',
    });
  });

  it('rejects when the default provider is missing', () => {
    const r = createRuntimeClassRouter({ providers: [js], defaultProvider: 'wasi', classes });
    expect(r(pod())).toMatchObject({ reason: 'UnsupportedRuntimeClass', message: expect.stringContaining('default provider "wasi" is not loaded') });
  });

  it('asks to retry later (not a rejection) while the RuntimeClass cache has not synced', () => {
    const unsynced: RuntimeClassSource = {
      handlerFor: () => ({ kind: 'unavailable', message: 'RuntimeClasses not listed yet: forbidden' }),
      stop: () => undefined,
    };
    const r2 = createRuntimeClassRouter({ providers, defaultProvider: 'wasi', classes: unsynced, retryMs: 250 });
    expect(r2(pod('js'))).toEqual({ retryAfterMs: 250, message: 'cannot resolve RuntimeClass "js": RuntimeClasses not listed yet: forbidden' });
    expect(createRuntimeClassRouter({ providers, defaultProvider: 'wasi', classes: unsynced })(pod('js'))).toMatchObject({ retryAfterMs: 1000 });
  });

  it('takes the class name as the handler in standalone mode', () => {
    const r = createRuntimeClassRouter({ providers, defaultProvider: 'wasi', classes: standaloneRuntimeClasses() });
    expect(r(pod('js'))).toEqual({ provider: js, handler: 'js' });
  });

  it('adapts to the pod controller, passing container and pod providers, rejections and retries through', () => {
    const c = controllerRouter(route);
    expect(c(pod('js'))).toEqual({ provider: js });
    expect(c(pod('vm'))).toEqual({ provider: podOwner });
    expect(c(pod('gvisor'))).toMatchObject({ reason: 'UnsupportedRuntimeClass' });
    const retry = controllerRouter(() => ({ retryAfterMs: 5, message: 'later' }));
    expect(retry(pod('js'))).toEqual({ retryAfterMs: 5, message: 'later' });
  });
});
