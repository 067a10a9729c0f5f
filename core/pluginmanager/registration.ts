/**
 * The two operations the reconciler runs per socket, after upstream
 * `operationexecutor/operation_generator.go`:
 *
 *   register:   dial (10 s) → GetInfo (1 s) → handler by type → validatePlugin
 *               → actual.add → registerPlugin → NotifyRegistrationStatus(true) (5 s)
 *               Every failure after GetInfo is told to the plugin with
 *               NotifyRegistrationStatus(false, reason), reason worded as upstream.
 *   unregister: actual.remove → handler.deRegisterPlugin
 */
import type * as grpc from '@grpc/grpc-js';
import { isNodeletError, nodeletError, type ErrorCode } from '../errors/index.ts';
import { clientOn, deadlineIn, dialUnix, grpcErrorText } from '../../sockets/dial.ts';
import { loadPluginRegistration, type PluginInfo__Output, type RegistrationClient } from '../../sockets/pluginregistration.ts';
import type { ActualStateOfWorld, RegisteredPlugin } from './actual-state.ts';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { PluginHandler } from './plugin-handler.ts';

/** Upstream `dialTimeoutDuration`. */
export const DIAL_TIMEOUT_MS = 10_000;
/** Upstream's GetInfo deadline. */
const GET_INFO_TIMEOUT_MS = 1_000;
/** Upstream `notifyTimeoutDuration`. */
const NOTIFY_TIMEOUT_MS = 5_000;

/** What {@link registerPlugin} needs. */
export interface RegisterRequest {
  readonly socketPath: string;
  /** The desired-state timestamp being registered. */
  readonly timestamp: number;
  readonly handlers: ReadonlyMap<string, PluginHandler>;
  readonly actual: ActualStateOfWorld;
  readonly log: Logger;
  /** Aborts a dial in progress (the manager stopping). */
  readonly signal?: AbortSignal;
}

/** Registers the plugin behind `socketPath`; rejects (with a catalogued error) on any failure. */
export async function registerPlugin(req: RegisterRequest): Promise<void> {
  const { socketPath } = req;
  let channel: grpc.Channel;
  try {
    channel = await dialUnix(socketPath, DIAL_TIMEOUT_MS, req.signal);
  } catch (e) {
    throw nodeletError('NDL_PLUGIN_DIAL', `RegisterPlugin error -- dial failed at socket ${socketPath}, err: ${(e as Error).message}`, e);
  }
  const client = clientOn((await loadPluginRegistration()).Registration, channel);
  try {
    await registerWith(client, req);
  } finally {
    client.close();
  }
}

async function registerWith(client: RegistrationClient, req: RegisterRequest): Promise<void> {
  const { socketPath, actual, log } = req;
  let info: PluginInfo__Output;
  try {
    info = await getInfo(client);
  } catch (e) {
    throw nodeletError(
      'NDL_PLUGIN_INFO',
      `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socketPath}, err: ${grpcErrorText(e)}`,
      e,
    );
  }
  const handler = req.handlers.get(info.type);
  if (handler === undefined) {
    return reject(client, socketPath, 'NDL_PLUGIN_TYPE', `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socketPath}`);
  }
  const endpoint = info.endpoint === '' ? socketPath : info.endpoint;
  const versions = info.supported_versions;
  try {
    await handler.validatePlugin(info.name, endpoint, versions);
  } catch (e) {
    return reject(client, socketPath, codeOf(e, 'NDL_PLUGIN_VALIDATION'), `RegisterPlugin error -- plugin validation failed with err: ${reasonOf(e)}`, e);
  }
  actual.add({ socketPath, timestamp: req.timestamp, type: info.type, handler, name: info.name, endpoint, versions });
  try {
    await handler.registerPlugin(info.name, endpoint, versions, undefined);
  } catch (e) {
    actual.remove(socketPath);
    return reject(client, socketPath, codeOf(e, 'NDL_PLUGIN_REGISTER'), `RegisterPlugin error -- plugin registration failed with err: ${reasonOf(e)}`, e);
  }
  try {
    await notify(client, true, '');
  } catch (e) {
    actual.remove(socketPath);
    await deRegister(handler, info.name, endpoint, log);
    throw nodeletError('NDL_PLUGIN_NOTIFY', `RegisterPlugin error -- failed to send registration status at socket ${socketPath}, err: ${grpcErrorText(e)}`, e);
  }
  log.info({ socketPath, type: info.type, name: info.name, endpoint, versions }, 'plugin registered');
}

/** Tells the plugin why it was rejected, then throws that reason. */
async function reject(client: RegistrationClient, socketPath: string, code: ErrorCode, reason: string, cause?: unknown): Promise<never> {
  try {
    await notify(client, false, reason);
  } catch (e) {
    throw nodeletError(
      'NDL_PLUGIN_NOTIFY',
      `RegisterPlugin error -- failed to send error at socket ${socketPath}, err: ${reason}: ${grpcErrorText(e)}`,
      cause ?? e,
    );
  }
  throw nodeletError(code, reason, cause);
}

/** Unregisters a plugin whose socket vanished or was re-created. Never rejects. */
export async function unregisterPlugin(plugin: RegisteredPlugin, actual: ActualStateOfWorld, log: Logger): Promise<void> {
  actual.remove(plugin.socketPath);
  await deRegister(plugin.handler, plugin.name, plugin.endpoint, log);
  log.info({ socketPath: plugin.socketPath, type: plugin.type, name: plugin.name }, 'plugin deregistered');
}

async function deRegister(handler: PluginHandler, name: string, endpoint: string, log: Logger): Promise<void> {
  try {
    await handler.deRegisterPlugin(name, endpoint);
  } catch (e) {
    log.error({ err: e, name, endpoint }, 'DeRegisterPlugin failed');
  }
}

function getInfo(client: RegistrationClient): Promise<PluginInfo__Output> {
  return new Promise((resolve, fail) => {
    // A bare Error on purpose: registerWith wraps whatever fails here as NDL_PLUGIN_INFO, reading its message via grpcErrorText.
    client.GetInfo({}, { deadline: deadlineIn(GET_INFO_TIMEOUT_MS) }, (err, res) => (err || !res ? fail(err ?? new Error('empty reply')) : resolve(res)));
  });
}

function notify(client: RegistrationClient, registered: boolean, error: string): Promise<void> {
  return new Promise((resolve, fail) => {
    client.NotifyRegistrationStatus({ plugin_registered: registered, error }, { deadline: deadlineIn(NOTIFY_TIMEOUT_MS) }, (err) =>
      err ? fail(err) : resolve(),
    );
  });
}

/** A handler's error text without our catalogue prefix (the plugin sees upstream-style reasons). */
function reasonOf(e: unknown): string {
  if (isNodeletError(e)) return e.detail;
  return e instanceof Error ? e.message : String(e);
}

function codeOf(e: unknown, fallback: ErrorCode): ErrorCode {
  return isNodeletError(e) ? e.code : fallback;
}
