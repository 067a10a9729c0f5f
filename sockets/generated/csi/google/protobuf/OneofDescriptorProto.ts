// Original file: null

import type { OneofOptions as _google_protobuf_OneofOptions, OneofOptions__Output as _google_protobuf_OneofOptions__Output } from '../../google/protobuf/OneofOptions.ts';

export interface OneofDescriptorProto {
  'name'?: (string);
  'options'?: (_google_protobuf_OneofOptions | null);
}

export interface OneofDescriptorProto__Output {
  'name': (string);
  'options': (_google_protobuf_OneofOptions__Output | null);
}
