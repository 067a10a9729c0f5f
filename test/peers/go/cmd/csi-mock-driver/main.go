// Command csi-mock-driver serves Kubernetes' own e2e CSI mock driver
// (k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/driver + mock/service,
// v1.36.3; upstream has no main for it) on a unix socket, and appends every
// CSI call to --call-log as one JSON line:
//
//	{"method":"/csi.v1.Node/NodePublishVolume","request":{...},"response":{...},"error":"","code":"OK"}
//
// request/response are protojson (field names as in the CSI proto, e.g.
// "volume_context"). Tests assert on the call sequence and the requests.
//
// Error injection: --fail <Method>[@<volume id>]=<n>[:<code>] (repeatable)
// makes the first n calls of a method (short name, e.g. NodeStageVolume) —
// only those for that volume id when one is given — fail with a gRPC code
// (default Internal) before they reach the mock; those calls are logged too.
// Each log line also carries "time" (RFC 3339 with nanoseconds).
//
// Mock behaviour (upstream's): volumes are in memory (ids "1".."3" exist;
// CreateVolume adds more), NodeGetInfo's node id is the driver name,
// NodeStage only records, NodePublish mkdirs the target (its parent must
// exist; nothing is mounted), NodeUnpublish removes the target.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"

	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/driver"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

type failures struct {
	mu   sync.Mutex
	left map[string]int
	code map[string]codes.Code
}

func (f *failures) String() string { return "" }

// Set parses Method[@volume]=n[:Code].
func (f *failures) Set(v string) error {
	method, rest, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want Method[@volume]=n[:Code], got %q", v)
	}
	nStr, codeStr, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(nStr)
	if err != nil {
		return err
	}
	code := codes.Internal
	if codeStr != "" {
		if err := code.UnmarshalJSON([]byte(strconv.Quote(strings.ToUpper(codeStr)))); err != nil {
			return err
		}
	}
	f.left[method], f.code[method] = n, code
	return nil
}

// take reports whether this call of method (for volume, "" if none) must
// fail, and with which code; a volume-specific entry is used first.
func (f *failures) take(method, volume string) (codes.Code, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []string{method + "@" + volume, method} {
		if f.left[key] > 0 {
			f.left[key]--
			return f.code[key], true
		}
	}
	return codes.OK, false
}

// volumeOf is the request's volume_id, or "".
func volumeOf(req any) string {
	if v, ok := req.(interface{ GetVolumeId() string }); ok {
		return v.GetVolumeId()
	}
	return ""
}

// asJSON renders a CSI message as protojson. The spec module's messages are
// generated in the v1 API style, so they are adapted to v2 first.
func asJSON(m any) json.RawMessage {
	v1, ok := m.(protoadapt.MessageV1)
	if !ok || v1 == nil {
		return json.RawMessage("null")
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(protoadapt.MessageV2Of(v1))
	if err != nil || len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func main() {
	endpoint := flag.String("endpoint", "", "unix socket path (or unix:///path) to serve CSI on")
	name := flag.String("name", "io.kubernetes.storage.mock", "CSI driver name (also the node id)")
	callLog := flag.String("call-log", "", "file to append one JSON line per CSI call to")
	attachLimit := flag.Int64("attach-limit", 0, "max volumes per node reported by NodeGetInfo")
	enableTopology := flag.Bool("enable-topology", false, "report topology io.kubernetes.storage.mock/node")
	disableAttach := flag.Bool("disable-attach", true, "no ControllerPublish: NodeStage/NodePublish need no \"device\" publish context (CSIDriver attachRequired: false)")
	permissive := flag.Bool("permissive-target-path", false, "let NodePublish accept an existing target path")
	mountGroup := flag.Bool("volume-mount-group", false, "offer the VOLUME_MOUNT_GROUP node capability (the kubelet then passes fsGroup as volume_mount_group)")
	fail := &failures{left: map[string]int{}, code: map[string]codes.Code{}}
	flag.Var(fail, "fail", "Method[@volume]=n[:Code]: fail the first n calls of Method (for that volume id) (repeatable)")
	flag.Parse()
	path := strings.TrimPrefix(*endpoint, "unix://")
	if path == "" || *callLog == "" {
		log.Fatal("--endpoint and --call-log are required")
	}
	out, err := os.OpenFile(*callLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	var outMu sync.Mutex
	record := func(method string, req, resp any, err error) {
		line := struct {
			Method   string          `json:"method"`
			Request  json.RawMessage `json:"request"`
			Response json.RawMessage `json:"response"`
			Error    string          `json:"error"`
			Code     string          `json:"code"`
			Time     string          `json:"time"`
		}{method, asJSON(req), asJSON(resp), "", status.Code(err).String(), time.Now().UTC().Format(time.RFC3339Nano)}
		if err != nil {
			line.Error = err.Error()
			line.Response = json.RawMessage("null")
		}
		b, _ := json.Marshal(line)
		outMu.Lock()
		defer outMu.Unlock()
		_, _ = out.Write(append(b, '\n'))
	}
	interceptor := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		short := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
		if code, ok := fail.take(short, volumeOf(req)); ok {
			err := status.Errorf(code, "injected failure of %s", short)
			record(info.FullMethod, req, nil, err)
			return nil, err
		}
		resp, err := handler(ctx, req)
		record(info.FullMethod, req, resp, err)
		return resp, err
	}

	svc := service.New(service.Config{
		DriverName:               *name,
		DisableAttach:            *disableAttach,
		AttachLimit:              *attachLimit,
		EnableTopology:           *enableTopology,
		PermissiveTargetPath:     *permissive,
		VolumeMountGroupRequired: *mountGroup,
	})
	d := driver.NewCSIDriver(&driver.CSIDriverServers{Controller: svc, Identity: svc, Node: svc})
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Start(l, interceptor); err != nil {
		log.Fatal(err)
	}
	log.Printf("csi-mock-driver %s serving on %s, calls logged to %s", *name, path, *callLog)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	d.Stop()
	_ = os.Remove(path)
}
