/**
 * The shapes shared by the volume plugins: what a prepared volume is, what a
 * plugin gets to set one up, and the plugin interface itself (the extension
 * point CSI and others plug into without touching the built-in plugins).
 */
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { ObjectSource } from './object-source.ts';
import type { PodCertificateSource } from './pod-certificate-source.ts';

/** A volume ready to be presented to containers. */
export interface PreparedVolume {
  /** The volume's name in the pod spec. */
  readonly name: string;
  /** The directory (or, for hostPath `File`/`Socket`..., the file) on the host. */
  readonly hostPath: string;
  /** Forced read-only for every mount (configMap, secret, downwardAPI, projected), like upstream. */
  readonly readOnly: boolean;
  /** The volume source field, e.g. `emptyDir`, `configMap`, `csi`. */
  readonly kind: string;
  /** Things the user should know, e.g. `medium: Memory is a plain directory on this node`. */
  readonly notes?: readonly string[];
  /** When the volume must be re-synced at the latest (projected service-account tokens). */
  readonly refreshAt?: Date;
  /**
   * Set when the volume could not be made ready but the pod still starts the containers that
   * do not mount it (an image volume whose pull failed, as upstream): a container that mounts
   * it fails to start with `reason` (`ErrImagePull`, `ImagePullBackOff`, ...) and `message`.
   * `retryAt` (ms since the epoch): when to set it up again, before the periodic re-sync.
   */
  readonly unavailable?: { readonly reason: string; readonly message: string; readonly retryAt?: number };
}

/** Everything a plugin may use while setting a volume up. */
export interface VolumeContext {
  readonly pod: V1Pod;
  /** The pod's directory (`<root>/pods/<uid>`); volume dirs live in `<podDir>/volumes/<plugin>/<name>`. */
  readonly podDir: string;
  readonly source: ObjectSource;
  /** The credential bundles of `podCertificate` projected sources; absent in standalone mode. */
  readonly podCertificates?: PodCertificateSource;
  readonly nodeName: string;
  /** The node's primary IP (`status.hostIP`). */
  readonly hostIP: string;
  /** All node IPs (`status.hostIPs`); defaults to `[hostIP]`. */
  readonly hostIPs: readonly string[];
  /** The pod's IPs (`status.podIPs`), if known. */
  readonly podIPs: readonly string[];
  /** Node allocatable (`cpu`, `memory`, ...) used when a container has no limit (resourceFieldRef). */
  readonly nodeAllocatable: Readonly<Record<string, string>>;
  readonly log: Logger;
  /**
   * Settles when the volume's dir may be written (a tmpfs mount in progress for a
   * plugin with {@link VolumePlugin.waitsForDir}); absent: it may be written now.
   */
  readonly dirReady?: Promise<void>;
  /** True when the volume's dir is a tmpfs (memory): its small files are written with direct calls. */
  readonly dirInMemory?: boolean;
}

/** What a plugin gets to tear a volume down. */
export interface TearDownContext {
  /** The volume's directory, `<podDir>/volumes/<plugin dir>/<volume name>`. */
  readonly volumeDir: string;
  readonly podDir: string;
  readonly log?: Logger;
}

/**
 * A volume type. Register one in a {@link VolumePluginRegistry} to support a
 * new source (CSI does so from its own module).
 */
export interface VolumePlugin {
  /** The upstream plugin name, e.g. `kubernetes.io/empty-dir`; its escaped form names the plugin dir. */
  readonly pluginName: string;
  /** True when this plugin handles `volume`. */
  canSupport(volume: V1Volume): boolean;
  /** Prepares the volume (idempotent: called again on every re-sync). */
  setUp(volume: V1Volume, ctx: VolumeContext): Promise<PreparedVolume>;
  /**
   * True when `setUp` touches the volume's dir only after `ctx.dirReady` settled, so its
   * other work (API reads, a token request) may run while the dir is being mounted.
   */
  readonly waitsForDir?: boolean;
  /** Undoes `setUp` before the dir is removed (e.g. NodeUnpublishVolume). Absent = just remove the dir. */
  tearDown?(volumeName: string, ctx: TearDownContext): Promise<void>;
}
