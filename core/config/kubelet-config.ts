/**
 * `--config`: reads a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1)
 * and maps the fields nodelet supports onto settings. Like upstream, unknown
 * or unsupported fields do not fail the load; they come back as one warning.
 * Relative paths are resolved against the file's directory, as upstream does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { parseLogMaxFiles, parsePercent } from './flag-table.ts';
import type { AuthorizationMode, Settings } from './options.ts';
import { parseTaint } from './taints.ts';
import { parseGoDuration } from './duration.ts';
import { checkThresholdMap, parseGracePeriodMap } from './eviction.ts';
import {
  parseBool,
  parseDuration,
  parseIP,
  parsePort,
  parsePositiveDuration,
  parsePositiveInt,
  parsePodCIDRs,
  parseQuantity,
  parseVerbosity,
  parseLogFormat,
} from './values.ts';

const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

/** Settings read from a file, plus warnings for the caller to log. */
export interface KubeletConfigResult {
  settings: Settings;
  warnings: string[];
}

type FieldApply = (s: Settings, v: unknown, dir: string) => void;

const str = (v: unknown): string => {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a scalar value');
};
const filePath = (v: unknown, dir: string): string | undefined => {
  const p = str(v);
  return p === '' ? undefined : path.resolve(dir, p);
};

function parseTaintList(v: unknown): Settings['registerWithTaints'] {
  if (!Array.isArray(v)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a list of {key, value, effect}');
  return v.map((t: unknown) => {
    if (typeof t !== 'object' || t === null) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a list of {key, value, effect}');
    const { key, value, effect } = t as Record<string, unknown>;
    const kv = value === undefined || value === null ? str(key) : `${str(key)}=${str(value)}`;
    return parseTaint(`${kv}:${str(effect)}`);
  });
}

/** A mapping of scalars (`evictionHard: {memory.available: 100Mi}`). */
function strMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a mapping of signal to value');
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, str(x)]));
}

function parseMode(v: unknown): AuthorizationMode {
  const m = str(v);
  if (m !== 'Webhook' && m !== 'AlwaysAllow') throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be Webhook or AlwaysAllow');
  return m;
}

/** The supported fields, by dotted path. */
const FIELDS: Readonly<Record<string, FieldApply>> = {
  address: (s, v) => {
    s.address = parseIP(str(v));
  },
  port: (s, v) => {
    s.port = parsePort(str(v), true);
  },
  healthzPort: (s, v) => {
    s.healthzPort = parsePort(str(v), true);
  },
  healthzBindAddress: (s, v) => {
    s.healthzBindAddress = parseIP(str(v));
  },
  maxPods: (s, v) => {
    s.maxPods = parsePositiveInt(str(v));
  },
  podCIDR: (s, v) => {
    s.podCIDR = parsePodCIDRs(str(v));
  },
  registerNode: (s, v) => {
    s.registerNode = parseBool(str(v));
  },
  registerWithTaints: (s, v) => {
    s.registerWithTaints = parseTaintList(v);
  },
  nodeStatusUpdateFrequency: (s, v) => {
    s.nodeStatusUpdateFrequencyMs = parsePositiveDuration(str(v));
  },
  nodeStatusReportFrequency: (s, v) => {
    s.nodeStatusReportFrequencyMs = parsePositiveDuration(str(v));
  },
  shutdownGracePeriod: (s, v) => {
    s.shutdownGracePeriodMs = parseDuration(str(v));
  },
  shutdownGracePeriodCriticalPods: (s, v) => {
    s.shutdownGracePeriodCriticalPodsMs = parseDuration(str(v));
  },
  nodeLeaseDurationSeconds: (s, v) => {
    s.nodeLeaseDurationSeconds = parsePositiveInt(str(v));
  },
  syncFrequency: (s, v) => {
    s.syncFrequencyMs = parsePositiveDuration(str(v));
  },
  volumeStatsAggPeriod: (s, v) => {
    s.volumeStatsAggPeriodMs = parseGoDuration(str(v));
  },
  fileCheckFrequency: (s, v) => {
    s.fileCheckFrequencyMs = parsePositiveDuration(str(v));
  },
  staticPodPath: (s, v, dir) => {
    s.podManifestPath = filePath(v, dir);
  },
  tlsCertFile: (s, v, dir) => {
    s.tlsCertFile = filePath(v, dir);
  },
  tlsPrivateKeyFile: (s, v, dir) => {
    s.tlsPrivateKeyFile = filePath(v, dir);
  },
  'authentication.x509.clientCAFile': (s, v, dir) => {
    s.clientCAFile = filePath(v, dir);
  },
  'authentication.anonymous.enabled': (s, v) => {
    s.anonymousAuth = parseBool(str(v));
  },
  'authentication.webhook.enabled': (s, v) => {
    s.authenticationTokenWebhook = parseBool(str(v));
  },
  'authentication.webhook.cacheTTL': (s, v) => {
    s.authenticationTokenWebhookCacheTtlMs = parseDuration(str(v));
  },
  'authorization.mode': (s, v) => {
    s.authorizationMode = parseMode(v);
  },
  rotateCertificates: (s, v) => {
    s.rotateCertificates = parseBool(str(v));
  },
  serverTLSBootstrap: (s, v) => {
    s.serverTLSBootstrap = parseBool(str(v));
  },
  'authorization.webhook.cacheAuthorizedTTL': (s, v) => {
    s.authorizationWebhookCacheAuthorizedTtlMs = parseDuration(str(v));
  },
  'authorization.webhook.cacheUnauthorizedTTL': (s, v) => {
    s.authorizationWebhookCacheUnauthorizedTtlMs = parseDuration(str(v));
  },
  imageGCHighThresholdPercent: (s, v) => {
    s.imageGCHighThresholdPercent = parsePercent(str(v));
  },
  imageGCLowThresholdPercent: (s, v) => {
    s.imageGCLowThresholdPercent = parsePercent(str(v));
  },
  evictionHard: (s, v) => {
    s.evictionHard = checkThresholdMap(strMap(v));
  },
  evictionSoft: (s, v) => {
    s.evictionSoft = checkThresholdMap(strMap(v));
  },
  evictionSoftGracePeriod: (s, v) => {
    s.evictionSoftGracePeriodMs = parseGracePeriodMap(strMap(v));
  },
  evictionMinimumReclaim: (s, v) => {
    s.evictionMinimumReclaim = checkThresholdMap(strMap(v));
  },
  evictionPressureTransitionPeriod: (s, v) => {
    s.evictionPressureTransitionPeriodMs = parseDuration(str(v));
  },
  evictionMaxPodGracePeriod: (s, v) => {
    s.evictionMaxPodGracePeriodSeconds = Number(str(v));
    if (!Number.isSafeInteger(s.evictionMaxPodGracePeriodSeconds)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be an integer');
  },
  containerLogMaxSize: (s, v) => {
    s.containerLogMaxSize = parseQuantity(str(v));
  },
  containerLogMaxFiles: (s, v) => {
    s.containerLogMaxFiles = parseLogMaxFiles(str(v));
  },
  'logging.verbosity': (s, v) => {
    s.verbosityLevel = parseVerbosity(str(v));
  },
  'logging.format': (s, v) => {
    s.loggingFormat = parseLogFormat(str(v));
  },
};

/** Flattens nested mappings into dotted paths; supported fields, lists and scalars are leaves. */
function leaves(obj: Record<string, unknown>, prefix = ''): [string, unknown][] {
  return Object.entries(obj).flatMap(([k, v]): [string, unknown][] => {
    const key = prefix + k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(key in FIELDS)) {
      return leaves(v as Record<string, unknown>, `${key}.`);
    }
    return [[key, v]];
  });
}

/** Maps a parsed KubeletConfiguration document; `file` names it in errors and warnings. */
export function mapKubeletConfig(doc: unknown, file: string): KubeletConfigResult {
  const fail = (detail: string) => nodeletError('NDL_CONFIG_FILE', `${file}: ${detail}`);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw fail('not a YAML mapping');
  const { apiVersion, kind, ...rest } = doc as Record<string, unknown>;
  if (apiVersion !== KUBELET_CONFIG_API_VERSION) {
    throw fail(`apiVersion "${String(apiVersion ?? '')}" is not supported (want ${KUBELET_CONFIG_API_VERSION})`);
  }
  if (kind !== KUBELET_CONFIG_KIND) throw fail(`kind "${String(kind ?? '')}" is not ${KUBELET_CONFIG_KIND}`);
  const settings: Settings = {};
  const unsupported: string[] = [];
  const dir = path.dirname(file);
  for (const [key, value] of leaves(rest)) {
    const apply = FIELDS[key];
    if (!apply) {
      unsupported.push(key);
      continue;
    }
    if (value === null) continue;
    try {
      apply(settings, value, dir);
    } catch (e) {
      throw fail(`${key}: ${JSON.stringify(value)} ${errorDetail(e)}`);
    }
  }
  const warnings = unsupported.length === 0 ? [] : [`KubeletConfiguration ${file}: nodelet ignores unsupported fields: ${unsupported.join(', ')}`];
  return { settings, warnings };
}

/** Reads and maps a KubeletConfiguration file; throws NDL_CONFIG_FILE naming the file and problem. */
export function loadKubeletConfig(file: string): KubeletConfigResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw nodeletError('NDL_CONFIG_FILE', `${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, e);
  }
  let doc: unknown;
  try {
    // Loaded on use: `nodelet --help` and runs without --config skip yaml's ~80 modules.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    doc = parse(text);
  } catch (e) {
    throw nodeletError('NDL_CONFIG_FILE', `${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`, e);
  }
  return mapKubeletConfig(doc, file);
}
