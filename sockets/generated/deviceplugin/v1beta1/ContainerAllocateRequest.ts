// Original file: proto/deviceplugin/v1beta1/api.proto


export interface ContainerAllocateRequest {
  'devices_ids'?: (string)[];
}

export interface ContainerAllocateRequest__Output {
  'devices_ids': (string)[];
}
