// Original file: proto/csi/v1/csi.proto


export interface _csi_v1_PluginCapability_Service {
  'type'?: (_csi_v1_PluginCapability_Service_Type);
}

export interface _csi_v1_PluginCapability_Service__Output {
  'type': (_csi_v1_PluginCapability_Service_Type__Output);
}

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_PluginCapability_Service_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * CONTROLLER_SERVICE indicates that the Plugin provides RPCs for
   * the ControllerService. Plugins SHOULD provide this capability.
   * In rare cases certain plugins MAY wish to omit the
   * ControllerService entirely from their implementation, but such
   * SHOULD NOT be the common case.
   * The presence of this capability determines whether the CO will
   * attempt to invoke the REQUIRED ControllerService RPCs, as well
   * as specific RPCs as indicated by ControllerGetCapabilities.
   */
  CONTROLLER_SERVICE: 'CONTROLLER_SERVICE',
  /**
   * VOLUME_ACCESSIBILITY_CONSTRAINTS indicates that the volumes for
   * this plugin MAY NOT be equally accessible by all nodes in the
   * cluster. The CO MUST use the topology information returned by
   * CreateVolumeRequest along with the topology information
   * returned by NodeGetInfo to ensure that a given volume is
   * accessible from a given node when scheduling workloads.
   */
  VOLUME_ACCESSIBILITY_CONSTRAINTS: 'VOLUME_ACCESSIBILITY_CONSTRAINTS',
  /**
   * GROUP_CONTROLLER_SERVICE indicates that the Plugin provides
   * RPCs for operating on groups of volumes. Plugins MAY provide
   * this capability.
   * The presence of this capability determines whether the CO will
   * attempt to invoke the REQUIRED GroupController service RPCs, as
   * well as specific RPCs as indicated by
   * GroupControllerGetCapabilities.
   */
  GROUP_CONTROLLER_SERVICE: 'GROUP_CONTROLLER_SERVICE',
} as const;

export type _csi_v1_PluginCapability_Service_Type =
  | 'UNKNOWN'
  | 0
  /**
   * CONTROLLER_SERVICE indicates that the Plugin provides RPCs for
   * the ControllerService. Plugins SHOULD provide this capability.
   * In rare cases certain plugins MAY wish to omit the
   * ControllerService entirely from their implementation, but such
   * SHOULD NOT be the common case.
   * The presence of this capability determines whether the CO will
   * attempt to invoke the REQUIRED ControllerService RPCs, as well
   * as specific RPCs as indicated by ControllerGetCapabilities.
   */
  | 'CONTROLLER_SERVICE'
  | 1
  /**
   * VOLUME_ACCESSIBILITY_CONSTRAINTS indicates that the volumes for
   * this plugin MAY NOT be equally accessible by all nodes in the
   * cluster. The CO MUST use the topology information returned by
   * CreateVolumeRequest along with the topology information
   * returned by NodeGetInfo to ensure that a given volume is
   * accessible from a given node when scheduling workloads.
   */
  | 'VOLUME_ACCESSIBILITY_CONSTRAINTS'
  | 2
  /**
   * GROUP_CONTROLLER_SERVICE indicates that the Plugin provides
   * RPCs for operating on groups of volumes. Plugins MAY provide
   * this capability.
   * The presence of this capability determines whether the CO will
   * attempt to invoke the REQUIRED GroupController service RPCs, as
   * well as specific RPCs as indicated by
   * GroupControllerGetCapabilities.
   */
  | 'GROUP_CONTROLLER_SERVICE'
  | 3

export type _csi_v1_PluginCapability_Service_Type__Output = typeof _csi_v1_PluginCapability_Service_Type[keyof typeof _csi_v1_PluginCapability_Service_Type]

// Original file: proto/csi/v1/csi.proto

export const _csi_v1_PluginCapability_VolumeExpansion_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * ONLINE indicates that volumes may be expanded when published to
   * a node. When a Plugin implements this capability it MUST
   * implement either the EXPAND_VOLUME controller capability or the
   * EXPAND_VOLUME node capability or both. When a plugin supports
   * ONLINE volume expansion and also has the EXPAND_VOLUME
   * controller capability then the plugin MUST support expansion of
   * volumes currently published and available on a node. When a
   * plugin supports ONLINE volume expansion and also has the
   * EXPAND_VOLUME node capability then the plugin MAY support
   * expansion of node-published volume via NodeExpandVolume.
   * 
   * Example 1: Given a shared filesystem volume (e.g. GlusterFs),
   * the Plugin may set the ONLINE volume expansion capability and
   * implement ControllerExpandVolume but not NodeExpandVolume.
   * 
   * Example 2: Given a block storage volume type (e.g. EBS), the
   * Plugin may set the ONLINE volume expansion capability and
   * implement both ControllerExpandVolume and NodeExpandVolume.
   * 
   * Example 3: Given a Plugin that supports volume expansion only
   * upon a node, the Plugin may set the ONLINE volume
   * expansion capability and implement NodeExpandVolume but not
   * ControllerExpandVolume.
   */
  ONLINE: 'ONLINE',
  /**
   * OFFLINE indicates that volumes currently published and
   * available on a node SHALL NOT be expanded via
   * ControllerExpandVolume. When a plugin supports OFFLINE volume
   * expansion it MUST implement either the EXPAND_VOLUME controller
   * capability or both the EXPAND_VOLUME controller capability and
   * the EXPAND_VOLUME node capability.
   * 
   * Example 1: Given a block storage volume type (e.g. Azure Disk)
   * that does not support expansion of "node-attached" (i.e.
   * controller-published) volumes, the Plugin may indicate
   * OFFLINE volume expansion support and implement both
   * ControllerExpandVolume and NodeExpandVolume.
   */
  OFFLINE: 'OFFLINE',
} as const;

export type _csi_v1_PluginCapability_VolumeExpansion_Type =
  | 'UNKNOWN'
  | 0
  /**
   * ONLINE indicates that volumes may be expanded when published to
   * a node. When a Plugin implements this capability it MUST
   * implement either the EXPAND_VOLUME controller capability or the
   * EXPAND_VOLUME node capability or both. When a plugin supports
   * ONLINE volume expansion and also has the EXPAND_VOLUME
   * controller capability then the plugin MUST support expansion of
   * volumes currently published and available on a node. When a
   * plugin supports ONLINE volume expansion and also has the
   * EXPAND_VOLUME node capability then the plugin MAY support
   * expansion of node-published volume via NodeExpandVolume.
   * 
   * Example 1: Given a shared filesystem volume (e.g. GlusterFs),
   * the Plugin may set the ONLINE volume expansion capability and
   * implement ControllerExpandVolume but not NodeExpandVolume.
   * 
   * Example 2: Given a block storage volume type (e.g. EBS), the
   * Plugin may set the ONLINE volume expansion capability and
   * implement both ControllerExpandVolume and NodeExpandVolume.
   * 
   * Example 3: Given a Plugin that supports volume expansion only
   * upon a node, the Plugin may set the ONLINE volume
   * expansion capability and implement NodeExpandVolume but not
   * ControllerExpandVolume.
   */
  | 'ONLINE'
  | 1
  /**
   * OFFLINE indicates that volumes currently published and
   * available on a node SHALL NOT be expanded via
   * ControllerExpandVolume. When a plugin supports OFFLINE volume
   * expansion it MUST implement either the EXPAND_VOLUME controller
   * capability or both the EXPAND_VOLUME controller capability and
   * the EXPAND_VOLUME node capability.
   * 
   * Example 1: Given a block storage volume type (e.g. Azure Disk)
   * that does not support expansion of "node-attached" (i.e.
   * controller-published) volumes, the Plugin may indicate
   * OFFLINE volume expansion support and implement both
   * ControllerExpandVolume and NodeExpandVolume.
   */
  | 'OFFLINE'
  | 2

export type _csi_v1_PluginCapability_VolumeExpansion_Type__Output = typeof _csi_v1_PluginCapability_VolumeExpansion_Type[keyof typeof _csi_v1_PluginCapability_VolumeExpansion_Type]

export interface _csi_v1_PluginCapability_VolumeExpansion {
  'type'?: (_csi_v1_PluginCapability_VolumeExpansion_Type);
}

export interface _csi_v1_PluginCapability_VolumeExpansion__Output {
  'type': (_csi_v1_PluginCapability_VolumeExpansion_Type__Output);
}

/**
 * Specifies a capability of the plugin.
 */
export interface PluginCapability {
  /**
   * Service that the plugin supports.
   */
  'service'?: (_csi_v1_PluginCapability_Service | null);
  'volume_expansion'?: (_csi_v1_PluginCapability_VolumeExpansion | null);
  'type'?: "service"|"volume_expansion";
}

/**
 * Specifies a capability of the plugin.
 */
export interface PluginCapability__Output {
  /**
   * Service that the plugin supports.
   */
  'service'?: (_csi_v1_PluginCapability_Service__Output | null);
  'volume_expansion'?: (_csi_v1_PluginCapability_VolumeExpansion__Output | null);
  'type'?: "service"|"volume_expansion";
}
