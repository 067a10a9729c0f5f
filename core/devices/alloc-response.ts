/**
 * Protobuf bytes of one `v1beta1.ContainerAllocateResponse`, as upstream keeps
 * them in the checkpoint (`AllocResp`). Uses the gRPC method (de)serializers of
 * `DevicePlugin.Allocate`: an `AllocateResponse` holding one container response
 * is, on the wire, tag 0x0a + varint length + that response's own bytes.
 * The protocol is loaded by then: entries come from an allocation (a plugin's
 * endpoint loaded it) or from the checkpoint (DeviceManager.start loads it first).
 */
import { loadedDevicePlugin, type ContainerAllocateResponse__Output } from '../../sockets/deviceplugin.ts';
import { nodeletError } from '../errors/index.ts';

const FIELD_1_LEN = 0x0a;

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** Serializes one container response to its protobuf bytes. */
export function encodeContainerAllocateResponse(resp: ContainerAllocateResponse__Output): Buffer {
  const outer = loadedDevicePlugin().DevicePlugin.service.Allocate.responseSerialize({ container_responses: [resp] });
  if (outer[0] !== FIELD_1_LEN) throw nodeletError('NDL_DEVICE_CHECKPOINT', 'unexpected AllocateResponse encoding');
  let i = 1;
  while ((outer[i]! & 0x80) !== 0) i++;
  return outer.subarray(i + 1);
}

/** Parses protobuf bytes of one container response (absent fields get their defaults). */
export function decodeContainerAllocateResponse(bytes: Uint8Array): ContainerAllocateResponse__Output {
  const outer = Buffer.concat([Buffer.from([FIELD_1_LEN, ...varint(bytes.length)]), bytes]);
  const resp = loadedDevicePlugin().DevicePlugin.service.Allocate.responseDeserialize(outer);
  const first = resp.container_responses[0];
  if (first === undefined) throw nodeletError('NDL_DEVICE_CHECKPOINT', 'empty ContainerAllocateResponse encoding');
  return first;
}
