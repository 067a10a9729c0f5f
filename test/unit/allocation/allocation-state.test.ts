import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ALLOCATED_STATE_FILE,
  AllocationState,
  decodeState,
  encodeState,
  stateChecksum,
  type PodResourceInfo,
} from '../../../core/allocation/allocation-state.ts';
import { memoryLogger } from '../pods/fakes.ts';

const dir = mkdtempSync(join(tmpdir(), 'nodelet-allocation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the allocation checkpoint', () => {
  it("has upstream's checksum: FNV-32a of Go's dump of the data string (value computed with k8s.io/kubernetes checksum.New)", () => {
    const data = `{"entries":{"u1":{"ContainerResources":{"c1":{"limits":{"memory":"45Mi"},"requests":{"memory":"35Mi"}}},"PodLevelResources":null}}}`;
    expect(stateChecksum(data)).toBe(2730771131);
  });

  it("is written in upstream's shape, map keys sorted and ResourceRequirements in Go's field order, and read back", () => {
    const entries = new Map<string, PodResourceInfo>([
      ['u2', { ContainerResources: { b: { requests: { memory: '1Mi', cpu: '1' }, limits: { memory: '2Mi' } }, a: {} }, PodLevelResources: null }],
      ['u1', { ContainerResources: { c1: { limits: { memory: '45Mi' }, requests: { memory: '35Mi' } } }, PodLevelResources: null }],
    ]);
    const text = encodeState(entries);
    expect(JSON.parse(text)).toEqual({
      data: '{"entries":{"u1":{"ContainerResources":{"c1":{"limits":{"memory":"45Mi"},"requests":{"memory":"35Mi"}}},"PodLevelResources":null},"u2":{"ContainerResources":{"a":{},"b":{"limits":{"memory":"2Mi"},"requests":{"cpu":"1","memory":"1Mi"}}},"PodLevelResources":null}}}',
      checksum: expect.any(Number),
    });
    expect(Object.keys(JSON.parse(text))).toEqual(['data', 'checksum']);
    expect(decodeState(text).get('u2')!.ContainerResources.b).toEqual({ limits: { memory: '2Mi' }, requests: { cpu: '1', memory: '1Mi' } });
    expect(JSON.parse(encodeState(new Map())).data).toBe('{}');
  });

  it('refuses a file whose checksum does not match, with the checksums', () => {
    const text = encodeState(new Map([['u', { ContainerResources: {}, PodLevelResources: null }]]));
    const tampered = text.replace('"u"', '"v"').replace(/\\"u\\"/, '\\"v\\"');
    expect(() => decodeState(tampered)).toThrow(/checkpoint is corrupted: expected checksum \d+, actual \d+/);
    expect(() => decodeState('nope')).toThrow(/not JSON/);
  });

  it('survives a restart; writes only on change, the changes of one turn in one write; an unusable file is reported and nodelet starts from an empty state', async () => {
    const lines: string[] = [];
    const a = AllocationState.open(dir, ALLOCATED_STATE_FILE, memoryLogger(lines));
    const path = join(dir, ALLOCATED_STATE_FILE);
    a.setContainer('u1', 'c1', { limits: { memory: '40Mi' } });
    a.setContainer('u1', 'c1', { limits: { memory: '50Mi' } });
    await a.flush();
    const first = readFileSync(path, 'utf8');
    expect(decodeState(first).get('u1')!.ContainerResources.c1).toEqual({ limits: { memory: '50Mi' } });
    a.setContainer('u1', 'c1', { limits: { memory: '50Mi' } });
    await a.flush();
    expect(readFileSync(path, 'utf8')).toBe(first);
    const b = AllocationState.open(dir, ALLOCATED_STATE_FILE, memoryLogger(lines));
    expect(b.container('u1', 'c1')).toEqual({ limits: { memory: '50Mi' } });
    b.remove('u1');
    await b.flush();
    expect(readFileSync(path, 'utf8')).toBe(first); // a removal is written with the next change, as upstream
    writeFileSync(path, first.replace('50Mi', '60Mi'));
    const c = AllocationState.open(dir, ALLOCATED_STATE_FILE, memoryLogger(lines));
    expect(c.uids()).toEqual([]);
    expect(lines.join('\n')).toMatch(/NDL_ALLOCATION_CHECKPOINT.*checkpoint is corrupted|checkpoint is corrupted.*NDL_ALLOCATION_CHECKPOINT/);
  });
});
