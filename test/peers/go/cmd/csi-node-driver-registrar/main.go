// Command csi-node-driver-registrar is the test harness's stand-in for
// kubernetes-csi/node-driver-registrar v2.17.0, whose module the Go module
// proxy reachable here refuses. It is written from the upstream program's
// documented behaviour, with the same flags and the same wire types
// (k8s.io/kubelet/pkg/apis/pluginregistration/v1):
//
//  1. connect to the CSI driver on --csi-address (retrying) and ask
//     GetPluginInfo for its name;
//  2. serve pluginregistration.Registration on
//     <--plugin-registration-path>/<driver>-reg.sock;
//  3. GetInfo answers {type: CSIPlugin, name: <driver>,
//     endpoint: <--kubelet-registration-path>, supported_versions: ["1.0.0"]};
//  4. NotifyRegistrationStatus with registered=false makes it exit 1
//     (upstream restarts the container that way);
//  5. SIGTERM/SIGINT remove the socket and exit 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

var (
	csiAddress              = flag.String("csi-address", "/run/csi/socket", "Path of the CSI driver socket.")
	kubeletRegistrationPath = flag.String("kubelet-registration-path", "", "Path of the CSI driver socket as the kubelet sees it (returned in GetInfo).")
	pluginRegistrationPath  = flag.String("plugin-registration-path", "/registration", "Directory for the registration socket (the kubelet's plugins_registry).")
	operationTimeout        = flag.Duration("timeout", time.Second, "Timeout of each CSI call.")
	_                       = flag.Int("v", 0, "Log verbosity (accepted for compatibility).")
)

// supportedVersions is what upstream advertises for CSI.
var supportedVersions = []string{"1.0.0"}

type registrationServer struct {
	registerapi.UnimplementedRegistrationServer
	driverName string
	endpoint   string
}

func (s *registrationServer) GetInfo(ctx context.Context, req *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	log.Printf("Received GetInfo call: %+v", req)
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              s.driverName,
		Endpoint:          s.endpoint,
		SupportedVersions: supportedVersions,
	}, nil
}

func (s *registrationServer) NotifyRegistrationStatus(ctx context.Context, status *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	log.Printf("Received NotifyRegistrationStatus call: %+v", status)
	if !status.PluginRegistered {
		log.Printf("Registration process failed with error: %s, restarting registration container.", status.Error)
		os.Exit(1)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

func main() {
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if *kubeletRegistrationPath == "" {
		log.Fatal("kubelet-registration-path is a required parameter")
	}
	driverName, err := driverNameOf(*csiAddress)
	if err != nil {
		log.Fatalf("error retrieving CSI driver name: %v", err)
	}
	log.Printf("CSI driver name: %q", driverName)
	socketPath := filepath.Join(*pluginRegistrationPath, driverName+"-reg.sock")
	if err := removeSocket(socketPath); err != nil {
		log.Fatalf("failed to clean up %s: %v", socketPath, err)
	}
	lis, err := net.Listen("unix", socketPath)
	if err != nil {
		log.Fatalf("failed to listen on socket %s: %v", socketPath, err)
	}
	server := grpc.NewServer()
	registerapi.RegisterRegistrationServer(server, &registrationServer{driverName: driverName, endpoint: *kubeletRegistrationPath})
	go removeOnSignal(server, socketPath)
	log.Printf("Registration server started at: %s", socketPath)
	if err := server.Serve(lis); err != nil {
		log.Fatalf("registration server stopped serving: %v", err)
	}
}

// driverNameOf connects to the CSI driver (retrying until it answers) and returns its name.
func driverNameOf(address string) (string, error) {
	conn, err := grpc.NewClient("unix://"+absPath(address), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	identity := csi.NewIdentityClient(conn)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), *operationTimeout)
		info, err := identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
		cancel()
		if err == nil {
			if info.GetName() == "" {
				return "", fmt.Errorf("driver name is empty")
			}
			return info.GetName(), nil
		}
		log.Printf("Still connecting to unix://%s: %v", address, err)
		time.Sleep(time.Second)
	}
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// removeSocket deletes a stale socket file; anything else at that path is an error.
func removeSocket(path string) error {
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	return os.Remove(path)
}

func removeOnSignal(server *grpc.Server, socketPath string) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	sig := <-sigs
	log.Printf("Received signal %s, removing %s", sig, socketPath)
	server.Stop()
	_ = os.Remove(socketPath)
	os.Exit(0)
}
