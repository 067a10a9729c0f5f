import { describe, expect, it } from 'vitest';
import { errorDetail, nodeletError } from '../../../core/errors/index.ts';

describe('errorDetail', () => {
  it("gives a catalogued error's detail, without the catalogue prefix its message has", () => {
    const e = nodeletError('NDL_RETRY_EXHAUSTED', 'op: timed out waiting for the condition; caused by: boom');
    expect(e.message).toBe('retries exhausted: op: timed out waiting for the condition; caused by: boom');
    expect(errorDetail(e)).toBe('op: timed out waiting for the condition; caused by: boom');
  });

  it("gives any other error's message, and a non-error as a string", () => {
    expect(errorDetail(new Error('plain'))).toBe('plain');
    expect(errorDetail('text')).toBe('text');
    expect(errorDetail(undefined)).toBe('undefined');
  });
});
