package main

import (
	"context"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxStorageCapacity is upstream hostpath's default --maxvolumesize (1 TiB).
const maxStorageCapacity = 1 << 40

type controllerServer struct {
	csi.UnimplementedControllerServer
}

func (controllerServer) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME}},
	}}}, nil
}

// CreateVolume makes <statedir>/<uuid>; the same name again returns the same volume (upstream's idempotency).
func (controllerServer) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "Name missing in request")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "Volume Capabilities missing in request")
	}
	capacity := req.GetCapacityRange().GetRequiredBytes()
	if capacity > maxStorageCapacity {
		return nil, status.Errorf(codes.OutOfRange, "Requested capacity %d exceeds maximum allowed %d", capacity, int64(maxStorageCapacity))
	}
	topology := []*csi.Topology{{Segments: map[string]string{TopologyKeyNode: *nodeID}}}
	if v, ok := state.byName(req.GetName()); ok {
		if v.Capacity < capacity {
			return nil, status.Errorf(codes.AlreadyExists, "Volume with the same name: %s but with different size already exist", req.GetName())
		}
		return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: v.ID, CapacityBytes: v.Capacity, VolumeContext: req.GetParameters(), AccessibleTopology: topology}}, nil
	}
	id := uuid.NewString()
	if err := os.MkdirAll(volumePath(id), 0o777); err != nil {
		return nil, status.Errorf(codes.Internal, "failed to create volume %v: %v", id, err)
	}
	if err := state.add(hostPathVolume{ID: id, Name: req.GetName(), Capacity: capacity}); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: capacity, VolumeContext: req.GetParameters(), AccessibleTopology: topology}}, nil
}

// DeleteVolume removes the volume and its data; an unknown id is success (idempotent).
func (controllerServer) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "Volume ID missing in request")
	}
	if !volumeIDPattern.MatchString(req.GetVolumeId()) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid volume id %q", req.GetVolumeId())
	}
	if err := os.RemoveAll(volumePath(req.GetVolumeId())); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := state.remove(req.GetVolumeId()); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteVolumeResponse{}, nil
}
