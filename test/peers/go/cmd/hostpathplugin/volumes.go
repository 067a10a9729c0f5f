package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"
)

// volumeIDPattern keeps volume ids usable as one path element.
var volumeIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// volumePath is upstream's getVolumePath: <statedir>/<id>.
func volumePath(id string) string { return filepath.Join(*stateDir, id) }

// checkVolumeID refuses ids that are not one plain path element.
func checkVolumeID(id string) error {
	if !volumeIDPattern.MatchString(id) || len(id) > 128 || id == "state.json" {
		return fmt.Errorf("invalid volume id %q", id)
	}
	return nil
}

// isMountPoint reports whether path is the mount point of an entry of /proc/self/mountinfo.
func isMountPoint(path string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	clean := filepath.Clean(path)
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		fields := strings.Fields(scan.Text())
		if len(fields) > 4 && unescapeMountPath(fields[4]) == clean {
			return true, nil
		}
	}
	return false, scan.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMountPath(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// bindMount bind-mounts source on target, then remounts it read-only if asked.
func bindMount(source, target string, readOnly bool) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount --bind %s %s: %w", source, target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			_ = unix.Unmount(target, 0)
			return fmt.Errorf("remount read-only %s: %w", target, err)
		}
	}
	return nil
}
