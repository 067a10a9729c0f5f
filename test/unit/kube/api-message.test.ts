import { describe, expect, it } from 'vitest';
import { ApiException } from '@kubernetes/client-node';
import { apiMessage } from '../../../core/kube/client.ts';

describe('apiMessage', () => {
  it("reads the apiserver's Status message, raw or parsed, else the exception's own reason", () => {
    expect(apiMessage(new ApiException(403, 'x', JSON.stringify({ kind: 'Status', message: 'forbidden: no' }), {}))).toBe('forbidden: no');
    expect(apiMessage(new ApiException(409, 'x', { kind: 'Status', message: 'already exists' }, {}))).toBe('already exists');
    expect(apiMessage(new ApiException(401, 'Unauthorized', undefined, {}))).toBe('Unauthorized');
    expect(apiMessage(new ApiException(500, 'Unknown API Status Code!', undefined, {}))).toBe('HTTP-Code: 500');
    expect(apiMessage(new Error('connect ECONNREFUSED 127.0.0.1:1\nmore'))).toBe('connect ECONNREFUSED 127.0.0.1:1');
  });
});
