/**
 * Tells a WebAssembly core module from a WASI 0.2 component by the binary's
 * preamble: the magic `\0asm`, then a 16-bit version and a 16-bit layer.
 *
 *   core module  00 61 73 6d  01 00  00 00   (version 1, layer 0)
 *   component    00 61 73 6d  0d 00  01 00   (version 0x0d, layer 1)
 *
 * Anything else is `unknown` (the module path reports it as before).
 */
import { open } from 'node:fs/promises';

/** What a Wasm binary is, by its first 8 bytes. */
export type WasmKind = 'module' | 'component' | 'unknown';

/** The kind of a binary from its first bytes (fewer than 8: `unknown`). */
export function wasmKindOf(head: Uint8Array): WasmKind {
  if (head.length < 8 || head[0] !== 0x00 || head[1] !== 0x61 || head[2] !== 0x73 || head[3] !== 0x6d) return 'unknown';
  const layer = head[6]! | (head[7]! << 8);
  if (layer === 1) return 'component';
  if (layer === 0 && head[4] === 1 && head[5] === 0) return 'module';
  return 'unknown';
}

/** Reads the first 8 bytes of the file at `path` and returns its kind (`unknown` when unreadable). */
export async function wasmKindOfFile(path: string): Promise<WasmKind> {
  let fh;
  try {
    fh = await open(path, 'r');
    const head = new Uint8Array(8);
    const { bytesRead } = await fh.read(head, 0, 8, 0);
    return wasmKindOf(head.subarray(0, bytesRead));
  } catch {
    return 'unknown';
  } finally {
    await fh?.close();
  }
}
