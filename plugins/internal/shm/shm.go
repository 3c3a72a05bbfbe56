// Package shm provides the shared-memory segments through which the plugin
// host and its plugins exchange large tensors: files in /dev/shm (or the
// temporary directory where there is none) that both processes map.
//
// The host creates, grows and removes segments; a plugin maps them by path
// with a Mapper. Only paths, offsets and lengths cross the gRPC channel.
package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Prefix starts the name of every segment file: weft-<pid>-<...>.
const Prefix = "weft-"

// ErrUnsupported is returned where the platform cannot share memory.
var ErrUnsupported = errors.New("shared memory is not supported on this platform")

// Dirs returns the directories tried for segments, best first: /dev/shm
// when it is a writable directory, then the temporary directory.
func Dirs() []string {
	var out []string
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		out = append(out, "/dev/shm")
	}
	return append(out, os.TempDir())
}

// Segment is a shared-memory file mapped by the host.
type Segment struct {
	ID   uint32
	path string
	f    *os.File
	data []byte
}

// Path returns the segment's file.
func (s *Segment) Path() string { return s.path }

// Bytes returns the mapping; it changes when the segment grows.
func (s *Segment) Bytes() []byte { return s.data }

// Size returns the mapped size in bytes.
func (s *Segment) Size() int { return len(s.data) }

// Create makes a segment of at least size bytes in the first of dirs that
// has room, named weft-<pid>-<tag>-*.
func Create(dirs []string, tag string, id uint32, size int) (*Segment, error) {
	if size < minSize {
		size = minSize
	}
	size = roundPage(size)
	var errs []error
	for _, dir := range dirs {
		s, err := create(dir, tag, id, size)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("shared memory segment of %d bytes: %w", size, errors.Join(errs...))
}

func create(dir, tag string, id uint32, size int) (*Segment, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-%s-", Prefix, os.Getpid(), sanitize(tag)))
	if err != nil {
		return nil, err
	}
	s := &Segment{ID: id, path: f.Name(), f: f}
	if err := s.resize(size); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return s, nil
}

// Grow enlarges the segment to at least size bytes (at least doubling it),
// keeping its contents. Offsets stay valid; the mapping moves.
func (s *Segment) Grow(size int) error {
	if size <= len(s.data) {
		return nil
	}
	size = roundPage(max(size, 2*len(s.data)))
	if err := s.unmap(); err != nil {
		return err
	}
	return s.resize(size)
}

// Close unmaps and removes the segment.
func (s *Segment) Close() error {
	err := s.unmap()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(s.path); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}

const minSize = 1 << 16

func roundPage(n int) int {
	const page = 1 << 12
	return (n + page - 1) &^ (page - 1)
}

func sanitize(tag string) string {
	b := []byte(tag)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	return string(b)
}

// Sweep removes segment files left in dirs by processes that no longer
// exist (an engine killed with SIGKILL cannot remove its own).
func Sweep(dirs []string) {
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, Prefix) || e.IsDir() {
				continue
			}
			pidText, _, ok := strings.Cut(name[len(Prefix):], "-")
			if !ok {
				continue
			}
			pid, err := strconv.Atoi(pidText)
			if err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
				continue
			}
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// Mapper maps segments on the plugin side, by path. A segment that grows
// is mapped again; earlier mappings stay valid until Close, so a request
// still reading one is never pulled from under it.
type Mapper struct {
	maps map[string]*mapping
	old  [][]byte
}

type mapping struct {
	data     []byte
	readOnly bool
}

// NewMapper returns an empty Mapper. It is not safe for concurrent use.
func NewMapper() *Mapper { return &Mapper{maps: map[string]*mapping{}} }

// Map returns a mapping of path at least size bytes long, read-only when
// readOnly is set (a plugin that writes there then faults instead of
// corrupting the engine's data).
func (m *Mapper) Map(path string, size int, readOnly bool) ([]byte, error) {
	if mp, ok := m.maps[path]; ok && len(mp.data) >= size && mp.readOnly == readOnly {
		return mp.data, nil
	}
	if !strings.HasPrefix(filepath.Base(path), Prefix) {
		return nil, fmt.Errorf("shared memory %s: not a weft segment", path)
	}
	data, err := mapFile(path, size, readOnly)
	if err != nil {
		return nil, fmt.Errorf("shared memory %s: %w", path, err)
	}
	if mp, ok := m.maps[path]; ok {
		m.old = append(m.old, mp.data)
	}
	m.maps[path] = &mapping{data: data, readOnly: readOnly}
	return data, nil
}

// Close unmaps everything.
func (m *Mapper) Close() error {
	var errs []error
	for _, mp := range m.maps {
		errs = append(errs, unmap(mp.data))
	}
	for _, d := range m.old {
		errs = append(errs, unmap(d))
	}
	m.maps, m.old = map[string]*mapping{}, nil
	return errors.Join(errs...)
}
