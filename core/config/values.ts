/**
 * Parsers for single setting values, shared by the command line and the
 * KubeletConfiguration file. Each throws NDL_CONFIG_INVALID_VALUE whose detail is
 * the one-line reason; callers wrap the detail with the flag or field name.
 */
import { nodeletError } from '../errors/index.ts';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseQuantity as parseExactQuantity, quantityValue } from '../quantity/index.ts';
import { parseGoDuration } from './duration.ts';

/** Log levels nodelet's logger understands, least to most severe. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
/** A log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

const INT = /^[+-]?\d+$/;

/** Parses a base-10 integer within [min, max]. */
export function parseIntIn(text: string, min: number, max: number): number {
  const n = INT.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be an integer');
  if (n < min || n > max) {
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be between ${min} and ${max}`);
  }
  return n;
}

/** Parses a positive integer. */
export function parsePositiveInt(text: string): number {
  const n = INT.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a positive integer');
  return n;
}

/** Parses a TCP port; `allowZero` lets tests ask for an ephemeral port. */
export function parsePort(text: string, allowZero = false): number {
  return parseIntIn(text, allowZero ? 0 : 1, 65535);
}

/** Parses a boolean the way Go's strconv.ParseBool does. */
export function parseBool(text: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be true or false');
}

/** Parses an IPv4 or IPv6 address. */
export function parseIP(text: string): string {
  if (isIP(text) === 0) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be an IPv4 or IPv6 address');
  return text;
}

/** Parses `--pod-cidr`: one CIDR, or an IPv4 and an IPv6 CIDR separated by a comma (upstream `podCIDR` is one; dual stack adds a second). */
export function parsePodCIDRs(text: string): string[] {
  const list = text
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  const ok = (c: string) => /^[0-9a-fA-F.:]+\/\d{1,3}$/.test(c) && isIP(c.split('/')[0]!) !== 0;
  if (list.length > 2 || !list.every(ok))
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a CIDR such as 10.244.0.0/24 (or an IPv4 and an IPv6 CIDR, comma-separated)');
  return list;
}

/** Parses a Linux interface name (1-15 characters, no `/`, whitespace or `:`). */
export function parseInterfaceName(text: string): string {
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(text)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be an interface name of 1-15 letters, digits, _ . or -');
  return text;
}

/** Parses a positive Go duration into milliseconds. */
export function parsePositiveDuration(text: string): number {
  const ms = parseGoDuration(text);
  if (!(ms > 0)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a positive duration such as 10s or 1m30s');
  return ms;
}

/**
 * Parses `crashLoopBackOff.maxContainerRestartPeriod`: a duration of 1s to 300s
 * (upstream's validation: whole milliseconds in [1000, 300000]), with upstream's wording.
 */
export function parseMaxContainerRestartPeriod(text: string): number {
  const ms = parseGoDuration(text);
  const whole = Math.trunc(ms);
  if (whole < 1000 || whole > 300_000) {
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', `CrashLoopBackOff.MaxContainerRestartPeriod (got: ${ms / 1000} seconds) must be set between 1s and 300s`);
  }
  return ms;
}

/** Parses a non-negative Go duration (0 allowed, e.g. a cache TTL) into milliseconds. */
export function parseDuration(text: string): number {
  const ms = parseGoDuration(text);
  if (!(ms >= 0)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a duration such as 0s, 30s or 2m0s');
  return ms;
}

/** Parses a log level name. */
export function parseLogLevel(text: string): LogLevel {
  const level = text.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `must be one of ${LOG_LEVELS.join(', ')}`);
  return level as LogLevel;
}

/** Log output formats (`--logging-format`, `logging.format`), as upstream's component-base logs. */
const LOG_FORMATS = ['text', 'json'] as const;
/** A log output format. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Parses a log format name (`text` or `json`). */
export function parseLogFormat(text: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(text)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `must be one of ${LOG_FORMATS.join(', ')}`);
  return text as LogFormat;
}

/** Maps klog verbosity (`--v=N`) to a level: 0-1 info, 2-3 debug, 4+ trace. A level name is accepted too. */
export function parseVerbosity(text: string): LogLevel {
  if (/^[a-z]+$/i.test(text)) return parseLogLevel(text);
  const v = parseIntIn(text, 0, Number.MAX_SAFE_INTEGER);
  return v >= 4 ? 'trace' : v >= 2 ? 'debug' : 'info';
}

/** Parses a non-empty file system path, resolved against the working directory. */
export function parsePath(text: string): string {
  if (text.trim() === '') throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a non-empty path');
  return path.resolve(text);
}

/** Parses a comma-separated list, dropping empty items. */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const QUANTITY = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/** Converts a Kubernetes byte quantity (`10Mi`, `500k`, `1024`) to bytes (rounded up). */
export function quantityToBytes(text: string): number {
  if (!QUANTITY.test(text.trim())) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a quantity such as 10Mi, 500Ki or 1048576');
  return Number(quantityValue(parseExactQuantity(text)));
}

/** Validates a positive byte quantity and returns it unchanged. */
export function parseQuantity(text: string): string {
  if (quantityToBytes(text) <= 0) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be greater than zero');
  return text.trim();
}
