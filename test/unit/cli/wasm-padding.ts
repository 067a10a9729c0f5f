/** A module made larger (and distinct) for the compile-cache tests: a custom section appended. */

/** `n` as unsigned LEB128. */
function leb(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return Buffer.from(out);
}

/** `wasm` with a custom section `name` of `bytes` zero bytes at its end (a custom section may be anywhere). */
export function withPadding(wasm: Uint8Array, bytes: number, name = 'nodelet-test-padding'): Buffer {
  const n = Buffer.from(name);
  const content = Buffer.concat([leb(n.length), n, Buffer.alloc(bytes)]);
  return Buffer.concat([wasm, Buffer.from([0]), leb(content.length), content]);
}
