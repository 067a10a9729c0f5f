/**
 * A Kubernetes `MicroTime` (Lease `renewTime`, Event `eventTime`): a `Date` whose
 * JSON is RFC 3339 with six fractional digits, as the apiserver's `RFC3339Micro`.
 * (client-node's `V1MicroTime` does the same, but importing it loads client-node.)
 */
export class MicroTime extends Date {
  /** `2026-12-01T07:00:00.123000Z` */
  override toISOString(): string {
    return super.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  }
}
