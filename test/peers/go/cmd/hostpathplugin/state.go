package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// hostPathVolume is one volume as upstream hostpath's state keeps it.
type hostPathVolume struct {
	ID        string   `json:"volID"`
	Name      string   `json:"volName"`
	Capacity  int64    `json:"volSize"`
	Ephemeral bool     `json:"ephemeral"`
	Staged    []string `json:"stagedPaths,omitempty"`
}

// volumeState is the driver's volume list, persisted as <statedir>/state.json
// (as upstream's pkg/state) so a restarted driver still knows its volumes.
type volumeState struct {
	mu   sync.Mutex
	file string
	Vols []hostPathVolume `json:"volumes"`
}

func loadState(stateDir string) (*volumeState, error) {
	s := &volumeState{file: filepath.Join(stateDir, "state.json")}
	b, err := os.ReadFile(s.file)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return s, json.Unmarshal(b, s)
}

func (s *volumeState) save() error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := s.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.file)
}

// update runs fn on the volume with id under the lock and saves; NotFound as upstream's GetVolumeByID.
func (s *volumeState) update(id string, fn func(v *hostPathVolume) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.Vols, func(v hostPathVolume) bool { return v.ID == id })
	if i < 0 {
		return status.Errorf(codes.NotFound, "volume id %s does not exist in the volumes list", id)
	}
	if err := fn(&s.Vols[i]); err != nil {
		return err
	}
	return s.save()
}

// byName returns the volume called name, if any.
func (s *volumeState) byName(name string) (hostPathVolume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.Vols, func(v hostPathVolume) bool { return v.Name == name })
	if i < 0 {
		return hostPathVolume{}, false
	}
	return s.Vols[i], true
}

func (s *volumeState) add(v hostPathVolume) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Vols = append(s.Vols, v)
	return s.save()
}

func (s *volumeState) remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Vols = slices.DeleteFunc(s.Vols, func(v hostPathVolume) bool { return v.ID == id })
	return s.save()
}
