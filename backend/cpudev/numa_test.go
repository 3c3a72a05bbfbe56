package cpudev

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestNUMANodes(t *testing.T) {
	root := t.TempDir()
	for node, list := range map[int]string{0: "0-3,8-11\n", 1: "4-7,12-15\n", 10: "16\n"} {
		dir := filepath.Join(root, fmt.Sprintf("node%d", node))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "cpulist"), []byte(list), 0o644)
	}
	nodes, err := numaNodes(root)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(nodes) != "[[0 1 2 3 8 9 10 11] [4 5 6 7 12 13 14 15] [16]]" {
		t.Errorf("nodes %v", nodes)
	}
	for _, tc := range []struct{ dev, want string }{{"cpu:0", "[0 1 2 3 8 9 10 11]"}, {"cpu:1", "[4 5 6 7 12 13 14 15]"}, {"cpu:4", "[4 5 6 7 12 13 14 15]"}, {"cpu:5", "[16]"}} {
		if got := fmt.Sprint(nodeCPUs(tc.dev, nodes)); got != tc.want {
			t.Errorf("%s on %s, want %s", tc.dev, got, tc.want)
		}
	}
	if nodeCPUs("cpu:1", nodes[:1]) != nil {
		t.Error("one node: a device should not be pinned")
	}
	for _, bad := range []string{"1-", "a", "3-1", "-2"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) succeeded", bad)
		}
	}
	if nodes, err := numaNodes(filepath.Join(root, "none")); err != nil || nodes != nil {
		t.Errorf("no listing: %v, %v", nodes, err)
	}
}
