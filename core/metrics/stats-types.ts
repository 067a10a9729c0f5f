/**
 * A snapshot of the node's and its containers' usage: what `/stats/summary`
 * and `/metrics/resource` render (summary.ts, resource-metrics.ts).
 */

/** CPU and memory of one container (undefined: the provider cannot measure it). */
export interface ContainerUsage {
  readonly name: string;
  readonly startTime: Date;
  readonly timestamp: Date;
  /** Cumulative CPU time, in core-nanoseconds. */
  readonly cpuNs?: number;
  /** Recent usage in nano-cores, from the previous sample (needs two). */
  readonly nanoCores?: number;
  readonly workingSetBytes?: number;
  readonly usageBytes?: number;
}

/** One pod's containers. */
export interface PodUsage {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly startTime?: Date;
  readonly containers: readonly ContainerUsage[];
}

/** The node: nodelet's process (every pod runs inside it). */
export interface NodeUsage {
  readonly nodeName: string;
  readonly startTime: Date;
  readonly timestamp: Date;
  readonly cpuNs: number;
  readonly nanoCores?: number;
  readonly workingSetBytes: number;
  readonly usageBytes: number;
  readonly rssBytes: number;
  readonly availableBytes?: number;
}

/** One pod volume's usage (upstream VolumeStats: FsStats + name + pvcRef); absent fields were not reported. */
export interface VolumeUsage {
  readonly podUid: string;
  readonly podNamespace: string;
  readonly podName: string;
  /** The pod's volume name. */
  readonly name: string;
  /** The claim's name (namespace = the pod's) when the volume is a PVC. */
  readonly pvcName?: string;
  readonly timestamp: Date;
  readonly capacityBytes?: number;
  readonly availableBytes?: number;
  readonly usedBytes?: number;
  readonly inodes?: number;
  readonly inodesFree?: number;
  readonly inodesUsed?: number;
}

/** Everything one scrape saw. */
export interface StatsSnapshot {
  readonly node: NodeUsage;
  readonly pods: readonly PodUsage[];
  /** Volume usage of pods (CSI volumes whose driver reports it); absent: none. */
  readonly volumes?: readonly VolumeUsage[];
  /** True if some container's stats could not be read. */
  readonly scrapeError: boolean;
}
