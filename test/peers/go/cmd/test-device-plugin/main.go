// Command test-device-plugin runs Kubernetes' own e2e_node test device plugin
// (k8s.io/kubernetes/test/e2e_node/testdeviceplugin, v1.36.3; upstream drives
// it from its Go tests, e.g. device_plugin_failures_pod_status_test.go, and has
// no main for it) as a process, so a test can change its devices' health.
//
// It serves DevicePlugin on /var/lib/kubelet/device-plugins/test-device-plugin-<unique-name>.sock
// and calls Register on /var/lib/kubelet/device-plugins/kubelet.sock (both
// hard-coded upstream: run it in a mount namespace where that directory is the
// kubelet's), advertising --devices (all Healthy) as --resource.
//
// --control <file>: polled every 100 ms; when its content changes, each line
// "<device ID> <Healthy|Unhealthy>" becomes the new device list, sent to the
// kubelet over ListAndWatch (UpdateDevices). A malformed file is logged and ignored.
// SIGTERM/SIGINT stop the server.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/gomega"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/test/e2e_node/testdeviceplugin"
)

func parseDevices(text string) ([]*pluginapi.Device, bool) {
	var devs []*pluginapi.Device
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || (f[1] != pluginapi.Healthy && f[1] != pluginapi.Unhealthy) {
			return nil, false
		}
		devs = append(devs, &pluginapi.Device{ID: f[0], Health: f[1]})
	}
	return devs, true
}

func main() {
	resource := flag.String("resource", "", "extended resource name to advertise")
	unique := flag.String("unique-name", "", "socket name suffix (test-device-plugin-<unique-name>.sock)")
	devices := flag.String("devices", "", "comma-separated device IDs, all Healthy at start")
	control := flag.String("control", "", "file of \"<ID> <Health>\" lines; a change is sent as the new device list")
	flag.Parse()
	if *resource == "" || *unique == "" || *devices == "" {
		log.Fatal("--resource, --unique-name and --devices are required")
	}
	// The package asserts with gomega (its upstream home is a Ginkgo suite): a failed assertion ends the process.
	gomega.RegisterFailHandler(func(message string, _ ...int) { log.Fatalf("assertion failed: %s", message) })

	var devs []*pluginapi.Device
	for _, id := range strings.Split(*devices, ",") {
		devs = append(devs, &pluginapi.Device{ID: id, Health: pluginapi.Healthy})
	}
	dp := testdeviceplugin.NewDevicePlugin(nil)
	if err := dp.RegisterDevicePlugin(context.Background(), *unique, *resource, devs); err != nil {
		log.Fatalf("register: %v", err)
	}
	log.Printf("registered %s with %d devices", *resource, len(devs))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sig
		log.Printf("stopping on %v", s)
		dp.Stop()
		os.Exit(0)
	}()

	last := ""
	for range time.Tick(100 * time.Millisecond) {
		if *control == "" {
			continue
		}
		b, err := os.ReadFile(*control)
		if err != nil || string(b) == last {
			continue
		}
		last = string(b)
		next, ok := parseDevices(last)
		if !ok {
			log.Printf("ignoring malformed control file %q", last)
			continue
		}
		// Blocks until the kubelet's ListAndWatch stream takes the update.
		dp.UpdateDevices(next)
		log.Printf("devices updated: %q", strings.TrimSpace(last))
	}
}
