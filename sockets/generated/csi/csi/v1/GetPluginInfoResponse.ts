// Original file: proto/csi/v1/csi.proto


export interface GetPluginInfoResponse {
  /**
   * The name MUST follow domain name notation format
   * (https://tools.ietf.org/html/rfc1035#section-2.3.1). It SHOULD
   * include the plugin's host company name and the plugin name,
   * to minimize the possibility of collisions. It MUST be 63
   * characters or less, beginning and ending with an alphanumeric
   * character ([a-z0-9A-Z]) with dashes (-), dots (.), and
   * alphanumerics between. This field is REQUIRED.
   */
  'name'?: (string);
  /**
   * This field is REQUIRED. Value of this field is opaque to the CO.
   */
  'vendor_version'?: (string);
  /**
   * This field is OPTIONAL. Values are opaque to the CO.
   */
  'manifest'?: ({[key: string]: string});
}

export interface GetPluginInfoResponse__Output {
  /**
   * The name MUST follow domain name notation format
   * (https://tools.ietf.org/html/rfc1035#section-2.3.1). It SHOULD
   * include the plugin's host company name and the plugin name,
   * to minimize the possibility of collisions. It MUST be 63
   * characters or less, beginning and ending with an alphanumeric
   * character ([a-z0-9A-Z]) with dashes (-), dots (.), and
   * alphanumerics between. This field is REQUIRED.
   */
  'name': (string);
  /**
   * This field is REQUIRED. Value of this field is opaque to the CO.
   */
  'vendor_version': (string);
  /**
   * This field is OPTIONAL. Values are opaque to the CO.
   */
  'manifest': ({[key: string]: string});
}
