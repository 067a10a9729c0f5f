/**
 * A kubeconfig file read into the current cluster and user, the subset of
 * client-go's `clientcmd` (and of client-node's `KubeConfig`, whose field names
 * it keeps) that a kubelet uses: server, CA (file or data), insecure-skip-tls-verify,
 * tls-server-name, client certificate and key (file or data), bearer token (or token file).
 * Relative file paths are taken from the kubeconfig's directory, as client-go does.
 *
 * Hand-written rather than client-node's `KubeConfig` because that class imports
 * client-node's whole generated API (every group and its model map, ~25 MiB of heap
 * at idle: bench/README.md, "Idle RSS via a thin API client"); no kept npm package
 * loads a kubeconfig without a full client. The YAML is parsed by `yaml`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { nodeletError } from '../errors/index.ts';

/** A kubeconfig cluster entry (client-node's `Cluster` field names). */
export interface Cluster {
  readonly name: string;
  /** The apiserver URL, without a trailing slash. */
  readonly server: string;
  readonly caData?: string;
  readonly caFile?: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

/** A kubeconfig user entry (client-node's `User` field names). */
export interface User {
  readonly name: string;
  readonly certData?: string;
  readonly certFile?: string;
  readonly keyData?: string;
  readonly keyFile?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  /** Set when the entry uses an exec plugin or auth provider, which nodelet does not run. */
  readonly unsupported?: string;
}

interface Context {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
}

type Doc = Record<string, unknown>;

/**
 * The `yaml` package, loaded on the first kubeconfig (a sync require: `loadFromFile` is sync, like client-go's).
 * Every scalar is read as its text (YAML's failsafe schema), as client-go reads the string fields of
 * its typed Config: a token such as `123456.0000000000000000` is a string there, not a float.
 */
function parseYaml(text: string): unknown {
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return parse(text, { schema: 'failsafe' });
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A boolean field: YAML 1.1's spellings of true, which client-go's YAML reader takes. */
const bool = (v: unknown): boolean => v === true || (typeof v === 'string' && /^(?:y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(v));

function entries(doc: Doc, key: string, body: string, file: string): { name: string; body: Doc }[] {
  const list = doc[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file}: ${key} is not a list`);
  return list.map((e: Doc, i) => {
    const name = str(e?.name);
    if (!name) throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file}: ${key}[${i}].name is missing`);
    const b = e[body];
    if (typeof b !== 'object' || b === null) throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file}: ${key}[${i}].${body} is missing`);
    return { name, body: b as Doc };
  });
}

/** A loaded kubeconfig: its clusters, users and contexts, and the current ones. */
export class KubeConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  private contexts: Context[] = [];
  currentContext = '';

  /** Reads `file` (YAML or JSON); relative paths in it are resolved against its directory. */
  loadFromFile(file: string): void {
    this.loadFromString(readFileSync(file, 'utf8'), path.dirname(path.resolve(file)), file);
  }

  /** Parses kubeconfig text; `root` resolves relative file paths. */
  loadFromString(text: string, root = process.cwd(), file = '<string>'): void {
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (e) {
      throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file}: ${(e as Error).message}`, e);
    }
    if (typeof doc !== 'object' || doc === null) throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file} is not a mapping`);
    const d = doc as Doc;
    const abs = (p: unknown) => (str(p) ? path.resolve(root, p as string) : undefined);
    this.clusters = entries(d, 'clusters', 'cluster', file).map(({ name, body: c }) => {
      const server = str(c.server);
      if (!server) throw nodeletError('NDL_API_CLIENT', `kubeconfig ${file}: cluster ${name} has no server`);
      return {
        name,
        server: server.replace(/\/$/, ''),
        caData: str(c['certificate-authority-data']),
        caFile: abs(c['certificate-authority']),
        skipTLSVerify: bool(c['insecure-skip-tls-verify']),
        tlsServerName: str(c['tls-server-name']),
        proxyUrl: str(c['proxy-url']),
      };
    });
    this.users = entries(d, 'users', 'user', file).map(({ name, body: u }) => ({
      name,
      certData: str(u['client-certificate-data']),
      certFile: abs(u['client-certificate']),
      keyData: str(u['client-key-data']),
      keyFile: abs(u['client-key']),
      token: str(u.token),
      tokenFile: abs(u.tokenFile),
      unsupported: u.exec ? 'exec plugin' : u['auth-provider'] ? 'auth provider' : undefined,
    }));
    this.contexts = entries(d, 'contexts', 'context', file).map(({ name, body: c }) => ({ name, cluster: str(c.cluster) ?? '', user: str(c.user) ?? '' }));
    this.currentContext = str(d['current-context']) ?? '';
  }

  private context(): Context | undefined {
    return this.contexts.find((c) => c.name === this.currentContext);
  }

  /** The current context's cluster, if any. */
  getCurrentCluster(): Cluster | undefined {
    const c = this.context();
    return c && this.clusters.find((x) => x.name === c.cluster);
  }

  /** The current context's user, if any. */
  getCurrentUser(): User | undefined {
    const c = this.context();
    return c && this.users.find((x) => x.name === c.user);
  }
}
