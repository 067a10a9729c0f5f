/**
 * A throwaway PKI for the test control plane, made with the openssl CLI:
 * cluster CA, apiserver serving cert, client certs (admin, controller-manager,
 * scheduler, apiserver→kubelet), service-account keys, and per-node certs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function ecKey(dir: string, name: string): string {
  const key = join(dir, `${name}.key`);
  if (!existsSync(key)) openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
  return key;
}

/** Paths of the cluster's key material. */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  saKey: string;
  saPub: string;
}

/**
 * The CA's key: RSA 2048, kubeadm's default (`encryptionAlgorithm: RSA-2048`). The apiserver
 * checks a client certificate's signature by the CA on every request (`x509.Verify` in its
 * authenticator), so the CA's key type sets that cost for every kubelet and controller: with
 * a P-256 CA it was ~12 % of the apiserver's CPU in a pod burst (bench/results/,
 * "An RSA cluster CA, as kubeadm makes").
 */
function rsaKey(dir: string, name: string): string {
  const key = join(dir, `${name}.key`);
  if (!existsSync(key)) openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key], dir);
  return key;
}

/** Creates the CA and service-account keys in `dir`. */
export function createCa(dir: string): Pki {
  mkdirSync(dir, { recursive: true });
  const caKey = rsaKey(dir, 'ca');
  const caCert = join(dir, 'ca.crt');
  openssl(['req', '-x509', '-new', '-key', caKey, '-days', '30', '-subj', '/CN=nodelet-test-ca', '-out', caCert], dir);
  const saKey = ecKey(dir, 'sa');
  const saPub = join(dir, 'sa.pub');
  openssl(['ec', '-in', saKey, '-pubout', '-out', saPub], dir);
  return { dir, caCert, caKey, saKey, saPub };
}

/** Options for one leaf certificate. */
export interface LeafOptions {
  name: string;
  cn: string;
  orgs?: string[];
  dnsNames?: string[];
  ips?: string[];
  usage: 'server' | 'client' | 'both';
}

/** Issues a leaf certificate signed by the CA; returns `{ cert, key }` paths. */
export function issue(pki: Pki, o: LeafOptions): { cert: string; key: string } {
  const key = ecKey(pki.dir, o.name);
  const cert = join(pki.dir, `${o.name}.crt`);
  const csr = join(pki.dir, `${o.name}.csr`);
  const ext = join(pki.dir, `${o.name}.ext`);
  const subj = `/CN=${o.cn}${(o.orgs ?? []).map((g) => `/O=${g}`).join('')}`;
  openssl(['req', '-new', '-key', key, '-subj', subj, '-out', csr], pki.dir);
  const san = [...(o.dnsNames ?? []).map((d) => `DNS:${d}`), ...(o.ips ?? []).map((i) => `IP:${i}`)];
  const eku = o.usage === 'server' ? 'serverAuth' : o.usage === 'client' ? 'clientAuth' : 'serverAuth,clientAuth';
  writeFileSync(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${eku}`,
      ...(san.length ? [`subjectAltName=${san.join(',')}`] : []),
    ].join('\n') + '\n',
  );
  openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial', '-days', '30', '-extfile', ext, '-out', cert], pki.dir);
  return { cert, key };
}

/** Writes a kubeconfig for `user` (a client cert) talking to `server`. */
export function writeKubeconfig(path: string, server: string, pki: Pki, client: { cert: string; key: string }, user: string): string {
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: nodelet-test',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority: ${pki.caCert}`,
      'users:',
      `- name: ${user}`,
      '  user:',
      `    client-certificate: ${client.cert}`,
      `    client-key: ${client.key}`,
      'contexts:',
      '- name: nodelet-test',
      '  context:',
      '    cluster: nodelet-test',
      `    user: ${user}`,
      'current-context: nodelet-test',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return path;
}
