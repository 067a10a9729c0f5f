/**
 * The static pod source keeps up with the manifest directory while nodelet runs
 * (upstream's file source): added, removed and changed manifests, and a refused
 * manifest reported once per content. Found missing by the fuzz suite (npm run fuzz).
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStaticPods } from '../../../core/pods/sources/static-pod-source.ts';
import { watchStaticPods, type StaticPodChanges } from '../../../core/pods/sources/static-pod-watcher.ts';
import { until } from '../../harness/until.ts';
import { memoryLogger } from './fakes.ts';

const pod = (name: string, arg = 'a') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: c\n    image: file:m.wasm\n    args: ["${arg}"]\n`;

describe('watchStaticPods', () => {
  let dir = '';
  let stop: (() => void) | undefined;
  afterEach(() => {
    stop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(periodMs: number) {
    const changes: StaticPodChanges[] = [];
    const log = memoryLogger();
    const initial = await readStaticPods(dir, 'n1', log);
    stop = watchStaticPods({
      path: dir,
      nodeName: 'n1',
      log,
      initial: initial.pods,
      initialRefused: initial.refused,
      periodMs,
      onChange: (c) => changes.push(c),
    });
    return changes;
  }

  it('adds a pod for a new manifest, replaces it when the manifest changes, removes it with the manifest', async () => {
    dir = mkdtempSync(join(tmpdir(), 'static-watch-'));
    writeFileSync(join(dir, 'old.yaml'), pod('old'));
    const changes = await start(60_000); // the file watch alone must see these
    writeFileSync(join(dir, 'new.yaml'), pod('new'));
    await until('the new pod is added', () => changes.some((c) => c.added.some((p) => p.metadata?.name === 'new-n1')));
    const firstUid = changes.flatMap((c) => c.added).find((p) => p.metadata?.name === 'new-n1')!.metadata!.uid;
    writeFileSync(join(dir, 'new.yaml'), pod('new', 'b'));
    await until('the changed pod is replaced', () => changes.some((c) => c.removed.some((p) => p.metadata?.uid === firstUid)));
    const replaced = changes.flatMap((c) => c.added).filter((p) => p.metadata?.name === 'new-n1');
    expect(replaced.at(-1)!.metadata!.uid).not.toBe(firstUid);
    unlinkSync(join(dir, 'old.yaml'));
    await until('the old pod is removed', () => changes.some((c) => c.removed.some((p) => p.metadata?.name === 'old-n1')));
    expect(changes.flatMap((c) => c.added).some((p) => p.metadata?.name === 'old-n1')).toBe(false);
  });

  it('reports a refused manifest once, not on every periodic re-read, and again when its content changes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'static-watch-'));
    const changes = await start(100);
    writeFileSync(join(dir, 'bad.yaml'), 'kind: [');
    await until('the refusal is reported', () => changes.some((c) => c.refused.length > 0));
    await new Promise((r) => setTimeout(r, 500)); // a fixed wait: several 100 ms re-reads of the refused manifest, none may report it again
    expect(changes.flatMap((c) => c.refused)).toHaveLength(1);
    writeFileSync(join(dir, 'bad.yaml'), 'kind: Pod\n');
    await until('the new refusal is reported', () => changes.flatMap((c) => c.refused).length === 2);
    expect(changes.flatMap((c) => c.refused)[1]!.file).toBe(join(dir, 'bad.yaml'));
  });
});
