// Command hostpathplugin is the test harness's stand-in for
// kubernetes-csi/csi-driver-host-path's hostpathplugin v1.18.0, whose module
// the Go module proxy reachable here refuses. It keeps the upstream flags and
// serves the real CSI v1 Identity and Node services
// (github.com/container-storage-interface/spec) on a unix socket; volumes are
// directories under --statedir, bind-mounted (needs root) to the target path.
//
// Node behaviour, as upstream's hostpath driver:
//   - NodeGetInfo: node_id = --nodeid, topology {topology.hostpath.csi/node: <nodeid>},
//     max_volumes_per_node = --maxvolumespernode;
//   - capabilities STAGE_UNSTAGE_VOLUME and GET_VOLUME_STATS;
//   - volumes are known from <statedir>/state.json (upstream's state file);
//     an unknown volume id is NotFound in NodeStage/NodePublish/NodeGetVolumeStats;
//   - NodeStageVolume records the staging path;
//   - NodePublishVolume of a persistent volume not staged at the request's
//     staging path is FailedPrecondition; otherwise it bind-mounts
//     <statedir>/<id> on the target path (read-only when asked); an inline
//     ephemeral volume (volume_context["csi.storage.k8s.io/ephemeral"] == "true")
//     is created at publish;
//   - NodeUnpublishVolume unmounts and removes the target path, and deletes an
//     ephemeral volume and its data.
//
// Controller service (as upstream, for the test harness to provision PVs):
// CreateVolume makes <statedir>/<uuid> (idempotent by name), DeleteVolume
// removes it; ControllerGetCapabilities: CREATE_DELETE_VOLUME.
package main

import (
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// vendorVersion is returned by GetPluginInfo.
const vendorVersion = "v1.18.0-nodelet-harness"

var (
	endpoint          = flag.String("endpoint", "unix://tmp/csi.sock", "CSI endpoint (unix://<path>).")
	driverName        = flag.String("drivername", "hostpath.csi.k8s.io", "Name of the driver.")
	nodeID            = flag.String("nodeid", "", "Node id.")
	stateDir          = flag.String("statedir", "/csi-data-dir", "Directory for volume data and state.")
	maxVolumesPerNode = flag.Int64("maxvolumespernode", 0, "Limit of volumes per node (0: none).")
	_                 = flag.Int("v", 0, "Log verbosity (accepted for compatibility).")
	// state is the volume list (<statedir>/state.json).
	state *volumeState
)

func main() {
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if *nodeID == "" {
		log.Fatal("--nodeid is required")
	}
	if err := os.MkdirAll(*stateDir, 0o750); err != nil {
		log.Fatalf("failed to create state directory: %v", err)
	}
	var err error
	if state, err = loadState(*stateDir); err != nil {
		log.Fatalf("failed to load state: %v", err)
	}
	path, ok := strings.CutPrefix(*endpoint, "unix://")
	if !ok {
		log.Fatalf("unsupported endpoint %q: only unix:// is served", *endpoint)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		log.Fatalf("failed to remove %s: %v", path, err)
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		log.Fatalf("failed to listen: %v", err)
	}
	server := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(server, &identityServer{})
	csi.RegisterNodeServer(server, &nodeServer{})
	csi.RegisterControllerServer(server, &controllerServer{})
	go stopOnSignal(server, path)
	log.Printf("Listening for connections on address: %s", lis.Addr())
	if err := server.Serve(lis); err != nil {
		log.Fatalf("server stopped: %v", err)
	}
}

func stopOnSignal(server *grpc.Server, path string) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	server.Stop()
	_ = os.Remove(path)
	os.Exit(0)
}
