package shm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSegmentGrowKeepsData(t *testing.T) {
	dir := t.TempDir()
	s, err := Create([]string{filepath.Join(dir, "missing"), dir}, "t/x", 3, 100)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 3 || filepath.Dir(s.Path()) != dir || !strings.HasPrefix(filepath.Base(s.Path()), fmt.Sprintf("weft-%d-t_x-", os.Getpid())) {
		t.Errorf("segment %d at %s", s.ID, s.Path())
	}
	if s.Size() < 100 || s.Size()%4096 != 0 {
		t.Errorf("size %d", s.Size())
	}
	pattern := bytes.Repeat([]byte("weft"), s.Size()/4)
	copy(s.Bytes(), pattern)
	old := s.Size()
	if err := s.Grow(old + 1); err != nil {
		t.Fatal(err)
	}
	if s.Size() < 2*old {
		t.Errorf("grew to %d, want at least %d", s.Size(), 2*old)
	}
	if !bytes.Equal(s.Bytes()[:old], pattern) {
		t.Error("growing lost the contents")
	}
	if err := s.Grow(10); err != nil || s.Size() < 2*old {
		t.Errorf("shrinking grow: %v, size %d", err, s.Size())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("segment file left after Close: %v", err)
	}
}

func TestMapper(t *testing.T) {
	dir := t.TempDir()
	s, err := Create([]string{dir}, "m", 1, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	copy(s.Bytes(), "hello")
	m := NewMapper()
	defer m.Close()
	b, err := m.Map(s.Path(), s.Size(), false)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:5]) != "hello" {
		t.Errorf("mapped %q", b[:5])
	}
	copy(b, "HELLO") // the plugin writes, the host sees it
	if string(s.Bytes()[:5]) != "HELLO" {
		t.Errorf("host sees %q", s.Bytes()[:5])
	}
	if err := s.Grow(3 * s.Size()); err != nil {
		t.Fatal(err)
	}
	b2, err := m.Map(s.Path(), s.Size(), false)
	if err != nil || len(b2) != s.Size() || string(b2[:5]) != "HELLO" {
		t.Errorf("remap after growth: %d bytes, %v", len(b2), err)
	}
	if string(b[:5]) != "HELLO" {
		t.Error("the earlier mapping became invalid")
	}
	cases := []struct {
		path    string
		size    int
		wantErr string
	}{
		{filepath.Join(dir, "other"), 10, "not a weft segment"},
		{s.Path(), s.Size() + 1, "want"},
		{filepath.Join(dir, "weft-1-gone"), 10, "no such file"},
	}
	for _, tc := range cases {
		if _, err := m.Map(tc.path, tc.size, true); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Map(%s, %d): %v, want %q", tc.path, tc.size, err, tc.wantErr)
		}
	}
}

func TestSweep(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process probing")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	dir := t.TempDir()
	files := map[string]bool{ // name → kept
		fmt.Sprintf("weft-%d-x-1", dead):        false,
		fmt.Sprintf("weft-%d-x-1", os.Getpid()): true,
		"weft-notapid-x":                        true,
		"unrelated":                             true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	Sweep([]string{dir})
	for name, kept := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}

func TestChannel(t *testing.T) {
	s, err := Create([]string{t.TempDir()}, "c", 0, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, err := NewChannel(s.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := NewMapper()
	defer m.Close()
	mem, err := m.Map(s.Path(), s.Size(), false)
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := NewChannel(mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewChannel(make([]byte, 100)); err == nil {
		t.Error("a 100-byte channel was accepted")
	}
	done := make(chan error, 1)
	go func() { // the plugin: upper-cases each request until closed
		for {
			switch st := plugin.State(); st {
			case ChanRequest:
				req, err := plugin.Request()
				if err != nil {
					done <- err
					return
				}
				out := append(plugin.ReplyArea(), bytes.ToUpper(req)...)
				plugin.SetReply(len(out))
				plugin.Set(ChanReply)
			case ChanClosed:
				done <- nil
				return
			default:
				plugin.Wait(st, 0)
			}
		}
	}()
	for i := range 100 {
		msg := fmt.Sprintf("request %d", i)
		out := append(host.RequestArea(), msg...)
		if !Aliases(out, host.RequestArea()) {
			t.Fatal("request did not land in the channel")
		}
		host.SetRequest(len(out))
		host.Set(ChanRequest)
		deadline := time.Now().Add(5 * time.Second)
		for host.Wait(ChanRequest, 10*time.Millisecond) != ChanReply {
			if time.Now().After(deadline) {
				t.Fatal("no reply within 5s")
			}
		}
		reply, err := host.Reply()
		if err != nil || string(reply) != strings.ToUpper(msg) {
			t.Fatalf("reply %q, %v", reply, err)
		}
		if !host.CompareAndSet(ChanReply, ChanIdle) {
			t.Fatal("state changed under the host")
		}
	}
	host.Set(ChanClosed)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin side did not stop")
	}
	host.SetRequest(host.Capacity() + 1)
	if _, err := plugin.Request(); err == nil {
		t.Error("an oversized request length was accepted")
	}
}
