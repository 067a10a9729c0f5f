// Original file: proto/deviceplugin/v1beta1/api.proto


export interface ContainerPreferredAllocationResponse {
  'deviceIDs'?: (string)[];
}

export interface ContainerPreferredAllocationResponse__Output {
  'deviceIDs': (string)[];
}
