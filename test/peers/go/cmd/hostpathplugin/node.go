package main

import (
	"context"
	"os"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TopologyKeyNode is upstream hostpath's topology key.
const TopologyKeyNode = "topology.hostpath.csi/node"

const ephemeralKey = "csi.storage.k8s.io/ephemeral"

type nodeServer struct {
	csi.UnimplementedNodeServer
}

func (nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{
		NodeId:             *nodeID,
		MaxVolumesPerNode:  *maxVolumesPerNode,
		AccessibleTopology: &csi.Topology{Segments: map[string]string{TopologyKeyNode: *nodeID}},
	}, nil
}

func (nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	rpc := func(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
		return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}}
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{
		rpc(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME),
		rpc(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS),
	}}, nil
}

func (nodeServer) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "Volume ID missing in request")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "Target path missing in request")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "Volume Capability missing in request")
	}
	err := state.update(req.GetVolumeId(), func(v *hostPathVolume) error {
		if !slices.Contains(v.Staged, req.GetStagingTargetPath()) {
			v.Staged = append(v.Staged, req.GetStagingTargetPath())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

func (nodeServer) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "Volume ID missing in request")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "Target path missing in request")
	}
	err := state.update(req.GetVolumeId(), func(v *hostPathVolume) error {
		v.Staged = slices.DeleteFunc(v.Staged, func(p string) bool { return p == req.GetStagingTargetPath() })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

func (nodeServer) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "Target path missing in request")
	}
	capability := req.GetVolumeCapability()
	if capability == nil {
		return nil, status.Error(codes.InvalidArgument, "Volume capability missing in request")
	}
	if capability.GetBlock() != nil {
		return nil, status.Error(codes.InvalidArgument, "block access is not supported by this driver")
	}
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	dir := volumePath(req.GetVolumeId())
	ephemeral := req.GetVolumeContext()[ephemeralKey] == "true"
	if ephemeral {
		// An inline ephemeral volume is created at publish (upstream: createVolume with ephemeral=true).
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
			if err := state.add(hostPathVolume{ID: req.GetVolumeId(), Name: req.GetVolumeId(), Ephemeral: true}); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
		}
	} else {
		if req.GetStagingTargetPath() == "" {
			return nil, status.Error(codes.InvalidArgument, "Staging target path missing in request")
		}
		err := state.update(req.GetVolumeId(), func(v *hostPathVolume) error {
			if !slices.Contains(v.Staged, req.GetStagingTargetPath()) {
				return status.Errorf(codes.FailedPrecondition, "volume %q must be staged at %q before it is published", v.ID, req.GetStagingTargetPath())
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if mounted, err := isMountPoint(target); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if mounted {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := bindMount(dir, target, req.GetReadonly()); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (nodeServer) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "Target path missing in request")
	}
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	mounted, err := isMountPoint(target)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if mounted {
		if err := unix.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "umount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// An ephemeral volume goes with its only publish (upstream deletes it at NodeUnpublish).
	ephemeral := false
	_ = state.update(req.GetVolumeId(), func(v *hostPathVolume) error { ephemeral = v.Ephemeral; return nil })
	if ephemeral {
		if err := os.RemoveAll(volumePath(req.GetVolumeId())); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if err := state.remove(req.GetVolumeId()); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (nodeServer) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumePath() == "" {
		return nil, status.Error(codes.InvalidArgument, "Volume Path not provided")
	}
	if err := state.update(req.GetVolumeId(), func(*hostPathVolume) error { return nil }); err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(req.GetVolumePath(), &fs); err != nil {
		if os.IsNotExist(err) {
			return nil, status.Errorf(codes.NotFound, "Could not get file information from %s: %v", req.GetVolumePath(), err)
		}
		return nil, status.Error(codes.Internal, err.Error())
	}
	bs := int64(fs.Bsize)
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(fs.Blocks) * bs, Available: int64(fs.Bavail) * bs, Used: int64(fs.Blocks-fs.Bfree) * bs},
		{Unit: csi.VolumeUsage_INODES, Total: int64(fs.Files), Available: int64(fs.Ffree), Used: int64(fs.Files - fs.Ffree)},
	}}, nil
}
