/** A node taint, as in core/v1. */
export interface Taint {
  /** The taint's key, e.g. `example.dev/wasi-only`. */
  readonly key: string;
  /** The taint's value, if any. */
  readonly value?: string;
  /** What the taint does to pods that do not tolerate it. */
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** A node condition a provider reports (type must not clash with core's). */
export interface NodeConditionContribution {
  /** The condition's type, e.g. `WasiRuntimeReady` (not one of core's: `Ready`, `MemoryPressure`, ...). */
  readonly type: string;
  /** Whether the condition holds. */
  readonly status: 'True' | 'False' | 'Unknown';
  /** A CamelCase reason for the status. */
  readonly reason: string;
  /** A human-readable explanation. */
  readonly message: string;
}

/** What a provider adds to the Node object. Quantities use Kubernetes notation (`'2'`, `'512Mi'`). */
export interface NodeContribution {
  /** Labels added to the Node's metadata. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Taints added to the Node's spec. */
  readonly taints?: readonly Taint[];
  /** Resources added to `status.capacity`, by resource name. */
  readonly capacity?: Readonly<Record<string, string>>;
  /** Resources added to `status.allocatable`, by resource name. */
  readonly allocatable?: Readonly<Record<string, string>>;
  /** Conditions added to `status.conditions`. */
  readonly conditions?: readonly NodeConditionContribution[];
}
