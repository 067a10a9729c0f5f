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

/** Everything one scrape saw. */
export interface StatsSnapshot {
  readonly node: NodeUsage;
  readonly pods: readonly PodUsage[];
  /** True if some container's stats could not be read. */
  readonly scrapeError: boolean;
}
