import { describe, expect, it } from 'vitest';
import { BINDING_LAG_RETRY_MS, isBindingLag, retryBindingLag } from '../../../core/volumes/binding-lag-retry.ts';
import { statusError } from '../../../core/kube/api-transport.ts';

const status = (code: number, message: string) => statusError(code, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code }));
const graphLag = status(
  403,
  'configmaps "kube-root-ca.crt" is forbidden: User "system:node:n1" cannot list resource "configmaps" in API group "" in the namespace "team": no relationship found between node \'n1\' and this object',
);
const restrictionLag = status(403, 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node');
const listerLag = status(404, 'pod "web-1" not found'); // the lister's NotFound: singular

describe('isBindingLag', () => {
  it("knows the apiserver's refusals that come from its caches lagging a binding", () => {
    expect(isBindingLag(graphLag)).toBe(true);
    expect(isBindingLag(status(403, 'secrets "s" is forbidden: no relationship found between node "n1" and this object'))).toBe(true);
    expect(isBindingLag(restrictionLag)).toBe(true);
    expect(isBindingLag(listerLag)).toBe(true);
    expect(isBindingLag(status(404, 'pods "web-1" not found'))).toBe(true);
  });

  it('refuses every other answer', () => {
    expect(isBindingLag(status(403, 'serviceaccounts "default" is forbidden: node requested token not bound to a pod'))).toBe(false);
    expect(isBindingLag(status(403, 'the UID in the bound object reference (u) does not match the UID in record'))).toBe(false);
    expect(isBindingLag(status(404, 'configmaps "app" not found'))).toBe(false);
    expect(isBindingLag(status(404, 'serviceaccounts "builder" not found'))).toBe(false);
    expect(isBindingLag(status(500, "no relationship found between node 'n1' and this object"))).toBe(false);
    expect(isBindingLag(new Error('no relationship found between node'))).toBe(false);
    expect(isBindingLag(undefined)).toBe(false);
  });
});

describe('retryBindingLag', () => {
  const run = async <T>(answers: Array<T | Error>) => {
    const waits: number[] = [];
    let asks = 0;
    const result = retryBindingLag(
      async () => {
        const a = answers[Math.min(asks++, answers.length - 1)]!;
        if (a instanceof Error) throw a;
        return a;
      },
      undefined,
      async (ms) => {
        waits.push(ms);
      },
    );
    return { result, waits, asks: () => asks };
  };

  it('asks again after 20 ms, then 40 ms, until the apiserver has caught up', async () => {
    const r = await run([restrictionLag, listerLag, 'token']);
    await expect(r.result).resolves.toBe('token');
    expect(r.asks()).toBe(3);
    expect(r.waits).toEqual([20, 40]);
  });

  it('gives up after twelve waits (5.1 s), none longer than 640 ms, with the refusal as the error', async () => {
    const r = await run([graphLag]);
    await expect(r.result).rejects.toBe(graphLag);
    expect(r.asks()).toBe(13);
    expect(r.waits).toEqual([20, 40, 80, 160, 320, 640, 640, 640, 640, 640, 640, 640]);
    expect(BINDING_LAG_RETRY_MS.reduce((a, b) => a + b, 0)).toBe(5100);
  });

  it('outwaits a lag of seconds in one call: a token, not a refusal and a second round', async () => {
    // A loaded apiserver's caches 2 s behind: refused at 0, 20, 60, 140, 300, 620, 1260 and 1900 ms, answered at 2540 ms.
    const r = await run([...Array<Error>(8).fill(restrictionLag), 'token']);
    await expect(r.result).resolves.toBe('token');
    expect(r.asks()).toBe(9);
    expect(r.waits.reduce((a, b) => a + b, 0)).toBe(2540);
  });

  it('returns any other error at once', async () => {
    const other = status(403, 'serviceaccounts "default" is forbidden: node requested token not bound to a pod');
    const r = await run([other, 'token']);
    await expect(r.result).rejects.toBe(other);
    expect(r.asks()).toBe(1);
    expect(r.waits).toEqual([]);
  });
});
