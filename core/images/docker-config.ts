/**
 * Credentials of the user running `nodelet push` / `nodelet pull`, read from
 * docker's client config like docker and oras do: `$DOCKER_CONFIG/config.json`,
 * else `~/.docker/config.json`; the `auths` map (`auth` = base64 `user:password`,
 * or `username`/`password`, or `identitytoken`). Credential helpers
 * (`credsStore`, `credHelpers`) are not run.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { toCredential, type DockerAuth } from './pull-secrets.ts';

/** The docker config file nodelet reads for `env`. */
function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG || join(homedir(), '.docker'), 'config.json');
}

/** The credentials in the docker config (none when the file does not exist). */
export async function dockerConfigCredentials(env: NodeJS.ProcessEnv = process.env): Promise<RegistryCredential[]> {
  const path = dockerConfigPath(env);
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw nodeletError('NDL_IMAGE_PULL', `cannot read ${path}: ${e.message}`);
  });
  if (text === undefined) return [];
  let auths: Record<string, DockerAuth> | undefined;
  try {
    auths = (JSON.parse(text) as { auths?: Record<string, DockerAuth> }).auths;
  } catch (e) {
    throw nodeletError('NDL_IMAGE_PULL', `${path} is not valid JSON: ${(e as Error).message}`);
  }
  return Object.entries(auths ?? {})
    .filter(([, a]) => typeof a === 'object' && a !== null)
    .map(([k, a]) => toCredential(k, a));
}
