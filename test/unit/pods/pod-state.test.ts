import { describe, expect, it } from 'vitest';
import { advance, INITIAL, isActive, type PodEvent, type PodState } from '../../../core/pods/pod-state.ts';

const events: PodEvent[] = ['first-sync', 'containers-stopped', 'volumes-unmounted', 'terminated-abnormally', 'torn-down', 'object-deleted'];

function walk(from: PodState, ...path: PodEvent[]): string {
  return path.reduce((s, e) => advance(s, e), from).name;
}

describe('pod state', () => {
  it('walks an admitted pod through its life: running, finished, volumes unmounted', () => {
    let s = advance(INITIAL.admitted, 'first-sync');
    expect(s).toEqual({ name: 'running' });
    s = advance(s, 'containers-stopped');
    expect(s).toEqual({ name: 'finished', volumesUnmounted: false });
    s = advance(s, 'volumes-unmounted');
    expect(s).toEqual({ name: 'finished', volumesUnmounted: true });
  });

  it('a pod stopped for good by the node is failed, and a late sync does not make it finished', () => {
    expect(walk(INITIAL.admitted, 'first-sync', 'terminated-abnormally')).toBe('failed');
    expect(walk(INITIAL.admitted, 'first-sync', 'terminated-abnormally', 'containers-stopped', 'first-sync')).toBe('failed');
    expect(walk(INITIAL.finished, 'terminated-abnormally')).toBe('failed');
  });

  it('deletion tears any state down, then the object goes; nothing moves a deleted pod', () => {
    for (const start of [INITIAL.admitted, INITIAL.rejected, INITIAL.finished]) {
      expect(walk(start, 'torn-down')).toBe('torn-down');
      expect(walk(start, 'torn-down', 'object-deleted')).toBe('deleted');
      for (const e of events) expect(walk(start, 'torn-down', 'object-deleted', e)).toBe('deleted');
    }
    // The object is deleted only after the teardown.
    expect(walk(INITIAL.admitted, 'object-deleted')).toBe('admitted');
  });

  it('a rejected pod never runs; a move the table does not list returns the same state object', () => {
    for (const e of ['first-sync', 'containers-stopped', 'volumes-unmounted', 'terminated-abnormally'] as const) {
      expect(advance(INITIAL.rejected, e)).toBe(INITIAL.rejected);
    }
    const unmounted = advance(INITIAL.finished, 'volumes-unmounted');
    expect(advance(unmounted, 'first-sync')).toBe(unmounted);
  });

  it('only admitted and running pods are active', () => {
    const active = [
      INITIAL.admitted,
      INITIAL.rejected,
      INITIAL.finished,
      advance(INITIAL.admitted, 'first-sync'),
      advance(INITIAL.admitted, 'terminated-abnormally'),
      advance(INITIAL.admitted, 'torn-down'),
    ]
      .filter(isActive)
      .map((s) => s.name);
    expect(active).toEqual(['admitted', 'running']);
  });
});
