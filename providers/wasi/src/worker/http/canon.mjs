// The canonical ABI as nodelet's own WASI 0.2 host speaks it to one core instance: reading and
// writing the instance's memory (strings, byte lists, results at a return pointer), allocating in
// it through its `cabi_realloc`, and the instance's table of resource handles.
//
// Why a host of our own rather than jco's generated bindings: jco's JavaScript glue costs ~50 µs of
// CPU per `incoming-handler.handle` call of a hello component (its per-call task bookkeeping),
// more than a plain Node server spends on a whole request. Calling the core module's imports and
// exports directly costs a fraction of a microsecond per call. The host implements the functions
// of the interfaces nodelet serves per request (worker/http/host-imports.mjs lists them); the
// flat signatures and memory layouts follow the Component Model's canonical ABI
// (`CanonicalABI.md`: flattening, `store`, `lower_flat`), with UTF-8 strings.
// Plain JavaScript, typed with JSDoc (workers start without a TypeScript loader).

/** A trap the host raises: the guest broke a rule of the ABI (unknown handle, bad UTF-8, …). */
export class HostTrap extends WebAssembly.RuntimeError {
  /** @param {string} message */
  constructor(message) {
    super(`wasm trap: ${message}`);
    this.name = 'RuntimeError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/**
 * The handles one instance holds, in one index space for every resource type (handles are opaque
 * to the guest; each lookup checks the type). Index 0 is never a handle.
 */
export class ResourceTable {
  /** @type {Array<object | undefined>} */
  #items = [undefined];
  /** @type {number[]} */
  #free = [];
  /** Live handles. */
  size = 0;

  /** @param {object} obj @returns {number} the new handle */
  add(obj) {
    this.size++;
    const h = this.#free.pop();
    if (h !== undefined) {
      this.#items[h] = obj;
      return h;
    }
    this.#items.push(obj);
    return this.#items.length - 1;
  }

  /**
   * The object behind `h`, which must be a `type`.
   * @template T
   * @param {number} h
   * @param {abstract new (...args: never[]) => T} type
   * @returns {T}
   */
  get(h, type) {
    const o = this.#items[h];
    if (!(o instanceof type)) throw new HostTrap(`unknown handle ${h} (expected a ${type.name})`);
    return o;
  }

  /**
   * Removes `h` (ownership passes to the host) and returns its object.
   * @template T
   * @param {number} h
   * @param {abstract new (...args: never[]) => T} type
   * @returns {T}
   */
  take(h, type) {
    const o = this.get(h, type);
    this.#items[h] = undefined;
    this.#free.push(h);
    this.size--;
    return o;
  }

  /** Every object still held (a request's leftovers), emptied. @returns {object[]} */
  drain() {
    const left = /** @type {object[]} */ (this.#items.filter((o) => o !== undefined));
    this.#items = [undefined];
    this.#free = [];
    this.size = 0;
    return left;
  }
}

/** One core instance as the host sees it: its memory, its allocator and its handles. */
export class Guest {
  /** Set once the instance exists (imports are made before it). @type {WebAssembly.Memory | undefined} */
  memory;
  /** The instance's `cabi_realloc`. @type {((old: number, oldSize: number, align: number, size: number) => number) | undefined} */
  realloc;
  table = new ResourceTable();
  /**
   * Rejects when the host ends the current request (its timeout): every wait of the instance
   * races it, so a suspended instance unwinds. Set per request.
   * @type {Promise<never>}
   */
  aborted = new Promise(() => {});
  /** Called when the instance suspends (a blocking import must wait): the response starts streaming. */
  onSuspend = () => {};
  /** @type {DataView | undefined} */
  #dv;

  /** A view of the memory as it is now (memory.grow replaces the buffer). */
  view() {
    const buf = /** @type {WebAssembly.Memory} */ (this.memory).buffer;
    if (this.#dv?.buffer !== buf) this.#dv = new DataView(buf);
    return this.#dv;
  }

  /** @param {number} ptr @param {number} len */
  bytes(ptr, len) {
    const buf = /** @type {WebAssembly.Memory} */ (this.memory).buffer;
    if (ptr + len > buf.byteLength) throw new HostTrap(`out-of-bounds list [${ptr}, ${ptr + len})`);
    return new Uint8Array(buf, ptr, len).slice();
  }

  /** @param {number} ptr @param {number} len */
  string(ptr, len) {
    const buf = /** @type {WebAssembly.Memory} */ (this.memory).buffer;
    if (ptr + len > buf.byteLength) throw new HostTrap(`out-of-bounds string [${ptr}, ${ptr + len})`);
    try {
      return utf8.decode(new Uint8Array(buf, ptr, len));
    } catch {
      throw new HostTrap('a string is not valid UTF-8');
    }
  }

  /** @param {number} align @param {number} size @returns {number} */
  alloc(align, size) {
    if (size === 0) return align;
    if (!this.realloc) throw new HostTrap('the component exports no cabi_realloc');
    const ptr = this.realloc(0, 0, align, size);
    if (ptr % align !== 0 || ptr + size > /** @type {WebAssembly.Memory} */ (this.memory).buffer.byteLength) {
      throw new HostTrap(`cabi_realloc returned an invalid pointer ${ptr}`);
    }
    return ptr;
  }

  /** Copies `b` into the guest. @param {Uint8Array} b @returns {[number, number]} pointer and length */
  putBytes(b) {
    const ptr = this.alloc(1, b.length);
    new Uint8Array(/** @type {WebAssembly.Memory} */ (this.memory).buffer, ptr, b.length).set(b);
    return [ptr, b.length];
  }

  /** @param {string} s @returns {[number, number]} pointer and length in bytes */
  putString(s) {
    return this.putBytes(encoder.encode(s));
  }

  /** Stores `list<tuple<string, list<u8>>>` (or of two strings) at `ret`. @param {number} ret @param {ReadonlyArray<readonly [string, string | Uint8Array]>} pairs */
  putPairs(ret, pairs) {
    const base = this.alloc(4, pairs.length * 16);
    pairs.forEach(([k, v], i) => {
      const [kp, kl] = this.putString(k);
      const [vp, vl] = typeof v === 'string' ? this.putString(v) : this.putBytes(v);
      const dv = this.view();
      dv.setUint32(base + i * 16, kp, true);
      dv.setUint32(base + i * 16 + 4, kl, true);
      dv.setUint32(base + i * 16 + 8, vp, true);
      dv.setUint32(base + i * 16 + 12, vl, true);
    });
    this.putPtrLen(ret, base, pairs.length);
  }

  /** @param {number} at @param {number} ptr @param {number} len */
  putPtrLen(at, ptr, len) {
    const dv = this.view();
    dv.setUint32(at, ptr, true);
    dv.setUint32(at + 4, len, true);
  }

  /** Stores `option<string>` at `ret` (tag, then pointer and length at +4). @param {number} ret @param {string | undefined} s */
  putOptionString(ret, s) {
    if (s === undefined) {
      this.view().setUint8(ret, 0);
      return;
    }
    const [p, l] = this.putString(s);
    const dv = this.view();
    dv.setUint8(ret, 1);
    this.putPtrLen(ret + 4, p, l);
  }

  /** Reads `list<tuple<string, list<u8>>>` at ptr/len. @param {number} ptr @param {number} len @returns {Array<[string, Uint8Array]>} */
  pairs(ptr, len) {
    /** @type {Array<[string, Uint8Array]>} */
    const out = [];
    for (let i = 0; i < len; i++) {
      const dv = this.view();
      const at = ptr + i * 16;
      out.push([this.string(dv.getUint32(at, true), dv.getUint32(at + 4, true)), this.bytes(dv.getUint32(at + 8, true), dv.getUint32(at + 12, true))]);
    }
    return out;
  }
}
