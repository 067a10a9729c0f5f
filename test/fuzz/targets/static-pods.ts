/**
 * Static pod manifests: a valid pod with one to three hostile mutations of its
 * fields, or a hostile file as a whole (bytes, YAML bombs, deep nesting, other
 * kinds). Each must end in a pod status reason or a refusal naming the file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ESCAPE_MARKER, type FuzzEnvironment } from '../environment.ts';
import type { Outcome } from '../outcome.ts';
import { runPodBatches, type PodInput } from '../pod-batch.ts';
import type { Rng } from '../rng.ts';

const HELLO = readFileSync(resolve(import.meta.dirname, '..', '..', '..', 'examples', 'static-pods', 'hello.wasm'));

type Pod = {
  apiVersion?: unknown;
  kind?: unknown;
  metadata: Record<string, unknown>;
  spec: Record<string, unknown> & { containers: Array<Record<string, unknown>> };
};

/** Field mutations: each edits the pod in place. */
const MUTATIONS: Array<(p: Pod, r: Rng, id: string) => void> = [
  (p, r) => (p.metadata.name = r.pick(['', 'A-Upper', 'has/slash', '..', 'x'.repeat(300), 'ünï', 'a..b', '-lead'])),
  (p, r) => (p.metadata.namespace = r.pick(['', 'Bad_NS', '../etc', 'x'.repeat(70)])),
  (p, r) =>
    (p.spec.containers[0]!.image = r.pick([
      '',
      'file:../canary/secret.txt',
      'file:/etc/passwd',
      'file:missing.wasm',
      'file:',
      ':::',
      'UPPER/Case:tag',
      '127.0.0.1:1/none:x',
    ])),
  (p, r, id) => {
    p.spec.containers[0]!.volumeMounts = [{ name: 'v', mountPath: '/data', subPath: r.pick(['../../..', `/tmp/${ESCAPE_MARKER}-${id}`, '..', 'a/../../b']) }];
    p.spec.volumes = [{ name: 'v', emptyDir: {} }];
  },
  (p) => (p.spec.containers[0]!.volumeMounts = [{ name: 'missing', mountPath: '/m' }]),
  (p, r) => (p.spec.volumes = [{ name: 'v', emptyDir: { sizeLimit: r.pick(['-1', 'abc', '1e999', '99999999999999999999Ei', '0']) } }]),
  (p, r) => (p.spec.containers[0]!.resources = { limits: { memory: r.pick(['abc', '-1Mi', '1e30', '0', '1Ki']), cpu: r.pick(['0.0000001', 'lots', '-1']) } }),
  (p, r) => (p.spec.containers[0]!.env = [{ name: r.pick(['', '1BAD', 'A=B', 'x'.repeat(5000)]), value: 'v' }]),
  (p) => (p.spec.containers[0]!.env = [{ name: 'BIG', value: 'x'.repeat(1 << 20) }]),
  (p, r) => (p.spec.containers[0]!.env = [{ name: 'F', valueFrom: { fieldRef: { fieldPath: r.pick(['spec.nope', 'metadata.annotations[', '../../', '']) } } }]),
  (p) => (p.spec.containers[0]!.args = Array.from({ length: 20_000 }, (_, i) => `arg${i}`)),
  (p) => (p.spec.containers[0]!.args = ['nul\u0000byte', '\u202e', '%s%n']),
  (p, r) => (p.spec.restartPolicy = r.pick(['Sometimes', '', 'always'])),
  (p, r, id) => (p.spec.containers[0]!.terminationMessagePath = r.pick([`/../../../tmp/${ESCAPE_MARKER}-${id}`, 'relative/path', '/dev/null/x'])),
  (p) => (p.spec.containers = []),
  (p) => (p.spec.containers = Array.from({ length: 60 }, (_, i) => ({ name: `c${i}`, image: 'file:hello.wasm' }))),
  (p) => p.spec.containers.push({ ...p.spec.containers[0] }),
  (p, r) => (p.spec.activeDeadlineSeconds = r.pick([-1, 0, 1])),
  (p, r) => (p.spec.terminationGracePeriodSeconds = r.pick([-5, 0, 99999999999])),
  (p, r) => (p.spec.containers[0]!.ports = [{ containerPort: r.pick([0, -1, 70000, 8080]), protocol: r.pick(['TCP', 'XTP', '']) }]),
  (p) => (p.spec.hostNetwork = 'yes'),
  (p) => (p.spec.containers[0]!.name = 'Bad Name'),
  (p, r) => (p.spec.containers[0]!.readinessProbe = { httpGet: { port: r.pick([0, 'nope', 99999]), path: '../../' }, periodSeconds: r.pick([0, -1, 1]) }),
  (p) => (p.spec.containers[0]!.lifecycle = { preStop: { sleep: { seconds: -3 } }, postStart: { httpGet: { port: 1 } } }),
  (p) => (p.spec.volumes = [{ name: 'h', hostPath: { path: '/proc/self/root/etc', type: 'Socket' } }]),
  (p) => (p.spec.containers[0]!.stdin = { not: 'a bool' }),
];

/** Whole-file inputs. */
const FILES: Array<(r: Rng) => string | Buffer> = [
  (r) => r.bytes(r.int(1, 4096)),
  () => 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed',
  () =>
    'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n',
  () => `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  () => `${'a:\n  '.repeat(3000)}b: 1\n`,
  () => 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n',
  () => 'apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n',
  () => 'null',
  () => '[]',
  () => '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"file:hello.wasm"}]',
  () => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations:\n    a: "${'x'.repeat(300_000)}"\nspec:\n  containers: []\n`,
  () => Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0xfe, 0x00, 0x00]),
  () => 'apiVersion: v2\nkind: Pod\nmetadata:\n  name: v2\nspec: {}\n',
  () => '!!binary AAAA\n',
];

function validPod(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'file:hello.wasm' }] },
  };
}

/** `count` manifest inputs. */
export function staticPodInputs(rng: Rng, count: number, prefix = 'sp'): PodInput[] {
  const out: PodInput[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${rng.seed % 1000}-${i}`;
    const file = `${id}.${rng.pick(['yaml', 'yml', 'json'])}`;
    if (rng.chance(0.25)) {
      const k = rng.int(0, FILES.length - 1);
      out.push({ input: `file #${k} as ${file}`, file, manifest: FILES[k]!(rng) });
      continue;
    }
    const pod = validPod(id);
    const picks = Array.from({ length: rng.int(1, 3) }, () => rng.int(0, MUTATIONS.length - 1));
    for (const m of picks) {
      try {
        MUTATIONS[m]!(pod, rng, id);
      } catch {
        // an earlier mutation removed what this one edits (no containers left)
      }
    }
    const name = typeof pod.metadata.name === 'string' ? pod.metadata.name : undefined;
    out.push({
      input: `mutations ${picks.join(',')} as ${file}`,
      file,
      manifest: file.endsWith('.json') ? JSON.stringify(pod) : toYaml(pod),
      podName: name,
    });
  }
  return out;
}

/** Runs `count` static-pod inputs. */
export async function fuzzStaticPods(env: FuzzEnvironment, rng: Rng, count: number, record: (o: Outcome) => void): Promise<void> {
  // One module file for all inputs, written once: rewriting a module while pods pull it is a test of its own.
  writeFileSync(join(env.manifestDir, 'hello.wasm'), HELLO);
  await runPodBatches(env, 'static-pods', staticPodInputs(rng, count), record);
}

/** JSON is YAML: a flow-style document keeps the generator free of a YAML writer. */
function toYaml(v: unknown): string {
  return `# fuzz\n${JSON.stringify(v)}\n`;
}
