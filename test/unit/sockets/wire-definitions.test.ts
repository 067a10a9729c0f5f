// Our .proto files must describe the same wire format as upstream's: same
// packages, messages, fields (name, number, type, label), oneofs, enums,
// services and methods. Options and comments are ignored. The upstream files
// come from the Go module cache that the control-plane build (test/cluster/go)
// fills; the version each of ours was copied from is named in its header.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, homedir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { loadProto, PROTO_ROOT, type GenericDefinition } from '../../../sockets/load.ts';
import { SERVICES as CSI_SERVICES } from '../../../sockets/csi.ts';
import { loadServices as devicePluginServices } from '../../../sockets/deviceplugin.ts';
import { loadServices as podResourcesServices } from '../../../sockets/podresources.ts';
import { loadServices as pluginRegistrationServices } from '../../../sockets/pluginregistration.ts';

const require = createRequire(import.meta.url);
const REPO = join(PROTO_ROOT, '..', '..');

const OURS: Record<string, { file: string; upstreamPath: string }> = {
  pluginregistration: { file: 'pluginregistration/v1/api.proto', upstreamPath: 'pkg/apis/pluginregistration/v1/api.proto' },
  deviceplugin: { file: 'deviceplugin/v1beta1/api.proto', upstreamPath: 'pkg/apis/deviceplugin/v1beta1/api.proto' },
  podresources: { file: 'podresources/v1/api.proto', upstreamPath: 'pkg/apis/podresources/v1/api.proto' },
  csi: { file: 'csi/v1/csi.proto', upstreamPath: 'csi.proto' },
  dra: { file: 'dra/v1/api.proto', upstreamPath: 'pkg/apis/dra/v1/api.proto' },
  draHealth: { file: 'dra-health/v1alpha1/api.proto', upstreamPath: 'pkg/apis/dra-health/v1alpha1/api.proto' },
};

function goModCache(): string {
  try {
    const out = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', timeout: 20_000 }).trim();
    if (out) return out;
  } catch {
    // no Go on PATH: fall back to Go's own default
  }
  return process.env.GOMODCACHE || join(process.env.GOPATH || join(homedir(), 'go'), 'pkg', 'mod');
}

/** `module@version` named in the header line `// Copied verbatim from <module>@<version> <path>`. */
function copiedFrom(ourFile: string): { module: string; version: string } {
  const header = readFileSync(join(PROTO_ROOT, ourFile), 'utf8').split('\n', 3).join('\n');
  const m = /Copied verbatim from (\S+)@(v\S+) /.exec(header);
  if (!m) throw new Error(`${ourFile}: header must name the upstream module@version it was copied from`);
  return { module: m[1], version: m[2] };
}

function upstreamFile(ourFile: string, upstreamPath: string): string {
  const { module, version } = copiedFrom(ourFile);
  const cache = goModCache();
  // The module cache escapes capital letters as !lower.
  const dir = join(cache, `${module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`)}@${version}`);
  const path = join(dir, upstreamPath);
  if (!existsSync(path)) {
    throw new Error(
      `upstream ${module}@${version} ${upstreamPath} is not in the Go module cache (${cache}). ` +
        `Fetch it with: (cd test/cluster/go && go mod download ${module}@${version}) — ` +
        `the control-plane build (test/cluster/build.sh) downloads it too.`,
    );
  }
  return path;
}

function loadRoot(file: string): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target.startsWith('google/protobuf/')) return require.resolve(`protobufjs/${target}`);
    return isAbsolute(target) ? target : join(PROTO_ROOT, target);
  };
  root.loadSync(file, { keepCase: true });
  root.resolveAll();
  return root;
}

type Shape = Record<string, unknown>;

function fieldShape(f: protobuf.Field): Shape {
  const map = f instanceof protobuf.MapField ? { keyType: f.keyType } : {};
  return {
    id: f.id,
    type: f.resolvedType ? f.resolvedType.fullName : f.type,
    rule: f.repeated ? 'repeated' : f.options?.proto3_optional ? 'optional' : 'singular',
    extend: f.extend ?? null,
    ...map,
  };
}

/** A comparable description of every type under the root, keyed by full name (options left out). */
function describeRoot(root: protobuf.Root): Shape {
  const out: Shape = {};
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const obj of ns.nestedArray) {
      if (obj.fullName.startsWith('.google.')) continue;
      if (obj instanceof protobuf.Type) {
        out[obj.fullName] = {
          kind: 'message',
          fields: Object.fromEntries(obj.fieldsArray.map((f) => [f.name, fieldShape(f)])),
          oneofs: Object.fromEntries(obj.oneofsArray.map((o) => [o.name, o.oneof])),
          reserved: obj.reserved ?? null,
        };
      } else if (obj instanceof protobuf.Enum) {
        out[obj.fullName] = { kind: 'enum', values: obj.values };
      } else if (obj instanceof protobuf.Service) {
        out[obj.fullName] = {
          kind: 'service',
          methods: Object.fromEntries(
            obj.methodsArray.map((m) => [
              m.name,
              {
                request: m.resolvedRequestType?.fullName,
                response: m.resolvedResponseType?.fullName,
                requestStream: !!m.requestStream,
                responseStream: !!m.responseStream,
              },
            ]),
          ),
        };
      } else if (obj instanceof protobuf.Field) {
        out[obj.fullName] = { kind: 'extension', ...fieldShape(obj) };
      } else {
        out[obj.fullName] = { kind: 'namespace' };
      }
      if (obj instanceof protobuf.Namespace || obj instanceof protobuf.Type) visit(obj as protobuf.NamespaceBase);
    }
  };
  visit(root);
  return out;
}

describe('sockets/proto matches upstream field for field', () => {
  for (const [name, { file, upstreamPath }] of Object.entries(OURS)) {
    it(`${name}: ${file}`, () => {
      const ours = describeRoot(loadRoot(file));
      const theirs = describeRoot(loadRoot(upstreamFile(file, upstreamPath)));
      expect(Object.keys(ours).length).toBeGreaterThan(3);
      expect(ours).toEqual(theirs);
    });
  }

  it('packages are the upstream ones', () => {
    const packages = (file: string): string[] =>
      Object.entries(describeRoot(loadRoot(file)))
        .filter(([, s]) => (s as Shape).kind === 'service')
        .map(([n]) => n.slice(0, n.lastIndexOf('.')));
    expect(packages(OURS.pluginregistration.file)).toEqual(['.pluginregistration']);
    expect(packages(OURS.deviceplugin.file)).toEqual(['.v1beta1', '.v1beta1']);
    expect(packages(OURS.podresources.file)).toEqual(['.v1']);
    expect(new Set(packages(OURS.csi.file))).toEqual(new Set(['.csi.v1']));
    expect(packages(OURS.dra.file)).toEqual(['.k8s.io.kubelet.pkg.apis.dra.v1']);
    expect(packages(OURS.draHealth.file)).toEqual(['.v1alpha1']);
  });
});

/** Each protocol module's generated services, by the name in {@link OURS}. */
const SERVICES: Record<string, () => Promise<readonly GenericDefinition[]>> = {
  csi: async () => CSI_SERVICES,
  deviceplugin: devicePluginServices,
  podresources: podResourcesServices,
  pluginregistration: pluginRegistrationServices,
};

describe('the static service definitions (sockets/load.ts) are the upstream services', () => {
  for (const [name, { file, upstreamPath }] of Object.entries(OURS)) {
    if (name === 'dra' || name === 'draHealth') continue; // ts-proto's grpc-js definitions, used directly (sockets/dra*.ts)
    it(`${name}: every service, method path and stream flag`, async () => {
      const pkg = loadProto<Record<string, unknown>>(file, await SERVICES[name]!());
      const services = loadRoot(upstreamFile(file, upstreamPath)).nestedArray.flatMap(function all(o: protobuf.ReflectionObject): protobuf.Service[] {
        if (o instanceof protobuf.Service) return [o];
        return o instanceof protobuf.Namespace && !o.fullName.startsWith('.google') ? o.nestedArray.flatMap(all) : [];
      });
      expect(services.length).toBeGreaterThan(0);
      for (const svc of services) {
        const full = svc.fullName.slice(1);
        const ctor = full.split('.').reduce<unknown>((ns, p) => (ns as Record<string, unknown> | undefined)?.[p], pkg) as
          { service: Record<string, Shape> } | undefined;
        expect(ctor, full).toBeDefined();
        const ours = Object.fromEntries(
          Object.entries(ctor!.service).map(([m, d]) => [m, { path: d.path, requestStream: d.requestStream, responseStream: d.responseStream }]),
        );
        const theirs = Object.fromEntries(
          svc.methodsArray.map((m) => [m.name, { path: `/${full}/${m.name}`, requestStream: !!m.requestStream, responseStream: !!m.responseStream }]),
        );
        expect(ours).toEqual(theirs);
      }
    });
  }
});

describe('sockets/generated is what generate.sh makes of the .proto files', () => {
  it('regenerating gives identical files', { timeout: 180_000 }, () => {
    const tmp = mkdtempSync(join(tmpdir(), 'nodelet-gen-'));
    try {
      execFileSync('sh', [join(REPO, 'sockets', 'generate.sh'), tmp], { cwd: REPO, stdio: 'pipe', timeout: 170_000 });
      const committed = join(REPO, 'sockets', 'generated');
      const list = (dir: string): string[] =>
        readdirSync(dir, { recursive: true, encoding: 'utf8' })
          .filter((p) => statSync(join(dir, p)).isFile())
          .sort();
      const files = list(tmp);
      expect(list(committed)).toEqual(files);
      for (const f of files) {
        expect(readFileSync(join(committed, f), 'utf8'), `sockets/generated/${relative(tmp, join(tmp, f))} differs: run npm run generate:protos`).toBe(
          readFileSync(join(tmp, f), 'utf8'),
        );
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
