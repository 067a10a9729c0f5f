/** A node taint, as in core/v1. */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** A node condition a provider reports (type must not clash with core's). */
export interface NodeConditionContribution {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** What a provider adds to the Node object. Quantities use Kubernetes notation (`'2'`, `'512Mi'`). */
export interface NodeContribution {
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
  readonly capacity?: Readonly<Record<string, string>>;
  readonly allocatable?: Readonly<Record<string, string>>;
  readonly conditions?: readonly NodeConditionContribution[];
}
