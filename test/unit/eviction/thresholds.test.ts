import { describe, expect, it } from 'vitest';
import { checkThresholdMap, parseGracePeriodMap, parseSignalMap, parseThresholdValue } from '../../../core/config/eviction.ts';
import { parseCommandLine } from '../../../core/config/index.ts';
import { mapKubeletConfig } from '../../../core/config/kubelet-config.ts';
import { buildThresholds, thresholdsMet, type Observations } from '../../../core/eviction/thresholds.ts';

const MI = 1024 * 1024;
const options = (argv: string[]) => {
  const c = parseCommandLine(argv);
  if (c.kind !== 'run') throw new Error(`not a run: ${c.kind}`);
  return c.options;
};
const settings = (
  hard: Record<string, string>,
  extra: { soft?: Record<string, string>; grace?: Record<string, number>; min?: Record<string, string> } = {},
) => ({
  evictionHard: hard,
  evictionSoft: extra.soft ?? {},
  evictionSoftGracePeriodMs: extra.grace ?? {},
  evictionMinimumReclaim: extra.min ?? {},
});

describe('eviction threshold parsing', () => {
  it('reads the flag syntax (signal<value, signal=value) and checks each signal and value as upstream', () => {
    expect(parseSignalMap('memory.available<100Mi,nodefs.available<10%', '<')).toEqual({ 'memory.available': '100Mi', 'nodefs.available': '10%' });
    expect(parseSignalMap('memory.available=1m30s', '=')).toEqual({ 'memory.available': '1m30s' });
    expect(() => parseSignalMap('memory.free<1Gi', '<')).toThrow(/unsupported eviction signal memory.free/);
    expect(() => parseSignalMap('memory.available>1Gi', '<')).toThrow(/expected <signal><<value>/);
    expect(() => checkThresholdMap({ 'nodefs.available': '120%' })).toThrow(/must be >= 0% and <= 100%/);
    expect(() => checkThresholdMap({ 'memory.available': '-1Gi' })).toThrow(/must be positive/);
    expect(() => checkThresholdMap({ 'memory.available': 'lots' })).toThrow(/not a quantity or a percentage/);
    expect(parseThresholdValue('memory.available', '1Gi')).toEqual({ quantity: 1024n * 1024n * 1024n });
    expect(parseThresholdValue('nodefs.available', '10%')).toEqual({ percentage: 0.1 });
    expect(parseThresholdValue('nodefs.available', '0%')).toBeUndefined();
    expect(parseGracePeriodMap({ 'memory.available': '1m30s' })).toEqual({ 'memory.available': 90_000 });
  });

  it("defaults to upstream's hard thresholds; a given --eviction-hard replaces them; a soft threshold needs a grace period", () => {
    const d = options([]);
    expect(d.evictionHard).toEqual({ 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' });
    expect(d.evictionPressureTransitionPeriodMs).toBe(300_000);
    const o = options(['--eviction-hard=memory.available<2Gi', '--eviction-pressure-transition-period=5s']);
    expect(o.evictionHard).toEqual({ 'memory.available': '2Gi' });
    expect(o.evictionPressureTransitionPeriodMs).toBe(5000);
    expect(() => parseCommandLine(['--eviction-soft=memory.available<2Gi'])).toThrow(
      /grace period must be specified for the soft eviction threshold memory.available/,
    );
    const soft = options(['--eviction-soft=memory.available<2Gi', '--eviction-soft-grace-period=memory.available=30s']);
    expect(buildThresholds(soft).find((t) => !t.hard)).toMatchObject({ signal: 'memory.available', gracePeriodMs: 30_000 });
  });
});

describe('eviction fields of the KubeletConfiguration file', () => {
  const doc = (fields: Record<string, unknown>) => ({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...fields });

  it('maps evictionHard/Soft/SoftGracePeriod/MinimumReclaim/PressureTransitionPeriod/MaxPodGracePeriod as upstream spells them', () => {
    const { settings, warnings } = mapKubeletConfig(
      doc({
        evictionHard: { 'memory.available': '200Mi', 'nodefs.available': '5%' },
        evictionSoft: { 'memory.available': '1Gi' },
        evictionSoftGracePeriod: { 'memory.available': '1m' },
        evictionMinimumReclaim: { 'memory.available': '0Mi' },
        evictionPressureTransitionPeriod: '30s',
        evictionMaxPodGracePeriod: 20,
      }),
      '/etc/kubelet.yaml',
    );
    expect(warnings).toEqual([]);
    expect(settings).toEqual({
      evictionHard: { 'memory.available': '200Mi', 'nodefs.available': '5%' },
      evictionSoft: { 'memory.available': '1Gi' },
      evictionSoftGracePeriodMs: { 'memory.available': 60_000 },
      evictionMinimumReclaim: { 'memory.available': '0Mi' },
      evictionPressureTransitionPeriodMs: 30_000,
      evictionMaxPodGracePeriodSeconds: 20,
    });
    expect(() => mapKubeletConfig(doc({ evictionHard: { 'memory.free': '1Gi' } }), '/etc/kubelet.yaml')).toThrow(
      /evictionHard: .*unsupported eviction signal memory.free/,
    );
  });
});

describe('thresholdsMet', () => {
  const obs = (available: number, capacity = 1000 * MI): Observations => ({ 'memory.available': { available, capacity } });

  it('meets a quantity threshold strictly below it and a percentage of capacity', () => {
    const [t] = buildThresholds(settings({ 'memory.available': '100Mi' }));
    expect(thresholdsMet([t!], obs(100 * MI), false)).toEqual([]);
    expect(thresholdsMet([t!], obs(100 * MI - 1), false)).toEqual([t]);
    const [p] = buildThresholds(settings({ 'memory.available': '10%' }));
    expect(thresholdsMet([p!], obs(99 * MI), false)).toEqual([p]);
    expect(thresholdsMet([p!], obs(101 * MI), false)).toEqual([]);
  });

  it('adds the minimum reclaim for a threshold already met', () => {
    const [t] = buildThresholds(settings({ 'memory.available': '100Mi' }, { min: { 'memory.available': '50Mi' } }));
    expect(thresholdsMet([t!], obs(120 * MI), false)).toEqual([]);
    expect(thresholdsMet([t!], obs(120 * MI), true)).toEqual([t]);
    expect(thresholdsMet([t!], obs(150 * MI), true)).toEqual([]);
  });
});
