import { describe, expect, it } from 'vitest';
import {
  dispatchedBetween,
  parseDispatchedByFlowSchema,
  parseFleetKinds,
  parseNodeCounts,
  parseSecondsMs,
  perNode,
  perNodeRate,
  podsPerNode,
} from '../../../bench/lib/fleet-stats.ts';

describe('the fleet figure --nodes argument', () => {
  it('is 10 and 50 without the flag', () => {
    expect(parseNodeCounts(['--only=fleet'])).toEqual([10, 50]);
  });

  it('takes a separate or an attached value, one count or several', () => {
    expect(parseNodeCounts(['--only=fleet', '--nodes', '50'])).toEqual([50]);
    expect(parseNodeCounts(['--nodes=10,50'])).toEqual([10, 50]);
  });

  it('refuses a missing, zero, negative or fractional count', () => {
    expect(() => parseNodeCounts(['--nodes'])).toThrow(/needs a value/);
    expect(() => parseNodeCounts(['--nodes', '--quick'])).toThrow(/needs a value/);
    expect(() => parseNodeCounts(['--nodes=0'])).toThrow(/"0" is not a positive whole number/);
    expect(() => parseNodeCounts(['--nodes=-3'])).toThrow(/"-3"/);
    expect(() => parseNodeCounts(['--nodes=2.5'])).toThrow(/"2.5"/);
    expect(() => parseNodeCounts(['--nodes=ten'])).toThrow(/"ten"/);
  });
});

describe('the fleet figure --kinds and windows', () => {
  it('runs every kind in order without --kinds, the named ones with it', () => {
    expect(parseFleetKinds([])).toEqual(['nodelet', 'hollow', 'kwok']);
    expect(parseFleetKinds(['--kinds=kwok,nodelet'])).toEqual(['kwok', 'nodelet']);
    expect(() => parseFleetKinds(['--kinds=nodelet,kind'])).toThrow(/"kind" is not one of nodelet, hollow, kwok/);
  });

  it('reads a window in seconds as ms, and refuses what is not a number of seconds', () => {
    expect(parseSecondsMs(['--settle-s=60'], 'settle-s', 10_000)).toBe(60_000);
    expect(parseSecondsMs(['--idle-s=1.5'], 'idle-s', 30_000)).toBe(1500);
    expect(parseSecondsMs([], 'idle-s', 30_000)).toBe(30_000);
    expect(() => parseSecondsMs(['--idle-s='], 'idle-s', 1)).toThrow(/"" is not a number of seconds/);
    expect(() => parseSecondsMs(['--idle-s=-1'], 'idle-s', 1)).toThrow(/"-1"/);
    expect(() => parseSecondsMs(['--idle-s=x'], 'idle-s', 1)).toThrow(/"x"/);
  });
});

const metrics = (nodeHigh: number, nodes: number, kwok: number) =>
  [
    '# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem',
    '# TYPE apiserver_flowcontrol_dispatched_requests_total counter',
    `apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-node-high",priority_level="node-high"} ${nodeHigh}`,
    `apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} ${nodes}`,
    `apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-kwok",priority_level="exempt"} ${kwok}`,
    `apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 1000`,
    'apiserver_flowcontrol_dispatched_requests_total_other{flow_schema="system-nodes"} 5',
    `apiserver_request_total{code="200",flow_schema="system-nodes"} 99`,
  ].join('\n');

describe('requests by flow schema', () => {
  it('parses the dispatched counter by flow schema and nothing else', () => {
    expect(parseDispatchedByFlowSchema(metrics(10, 20, 3))).toEqual({ 'system-node-high': 10, 'system-nodes': 20, 'bench-kwok': 3, exempt: 1000 });
  });

  it('diffs the named schemas, or all of them, between two scrapes (a schema new in the second counts from 0)', () => {
    const before = parseDispatchedByFlowSchema(metrics(10, 20, 3));
    const after = { ...parseDispatchedByFlowSchema(metrics(40, 80, 3)), 'global-default': 7 };
    expect(dispatchedBetween(before, after, ['system-node-high', 'system-nodes'])).toBe(90);
    expect(dispatchedBetween(before, after, ['bench-kwok'])).toBe(0);
    expect(dispatchedBetween(before, after)).toBe(97);
  });
});

describe('per-node shares', () => {
  it('divides a total among the nodes', () => {
    expect(perNode(1234, 50)).toBe(24.68);
    expect(perNode(10, 3, 1)).toBe(3.3);
    expect(perNode(10, 0)).toBeNaN();
  });

  it('turns requests over a window into requests per second per node', () => {
    expect(perNodeRate(600, 30, 10)).toBe(2);
    expect(perNodeRate(100, 30, 50)).toBe(0.067);
    expect(perNodeRate(100, 0, 50)).toBeNaN();
  });

  it('counts the pods of each node, nodes without pods included, pods elsewhere or unbound left out', () => {
    expect(podsPerNode(['a', 'a', 'b', undefined, 'other'], ['a', 'b', 'c'])).toEqual({ min: 0, max: 2 });
    expect(podsPerNode([], [])).toEqual({ min: 0, max: 0 });
  });
});
