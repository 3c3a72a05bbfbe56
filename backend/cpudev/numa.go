package cpudev

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// numaNodes returns the CPUs of each NUMA node listed under root (Linux's
// /sys/devices/system/node), in node order; nil where there is no such
// listing.
func numaNodes(root string) ([][]int, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "node[0-9]*"))
	if err != nil || len(dirs) == 0 {
		return nil, err
	}
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dirs[i]), "node"))
		b, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dirs[j]), "node"))
		return a < b
	})
	var nodes [][]int
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "cpulist"))
		if err != nil {
			return nil, err
		}
		cpus, err := parseCPUList(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(d, "cpulist"), err)
		}
		if len(cpus) > 0 {
			nodes = append(nodes, cpus)
		}
	}
	return nodes, nil
}

// parseCPUList parses Linux's CPU list format: "0-3,8,10-11".
func parseCPUList(s string) ([]int, error) {
	var out []int
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// nodeCPUs returns the CPUs of the NUMA node device cpu:N is placed on
// (node N modulo the nodes), or nil on a machine of one node.
func nodeCPUs(name string, nodes [][]int) []int {
	if len(nodes) < 2 {
		return nil
	}
	_, idx, _ := strings.Cut(name, ":")
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 {
		return nil
	}
	return nodes[n%len(nodes)]
}
