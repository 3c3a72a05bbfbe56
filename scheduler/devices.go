package scheduler

import (
	"fmt"
	"strconv"
	"strings"
)

// Devices is a parsed --devices spec, in Inferflow's notation: ';'
// separates layer groups that run one after another (pipeline
// parallelism), '&' joins the devices that split each layer of a group
// between them (tensor parallelism), and "=N" after a group's last device
// gives the group N layers ("cpu:0=8;cpu:1": the first 8 layers on cpu:0,
// the rest on cpu:1). "cpu:0&cpu:1;cpu:2&cpu:3" is both at once (hybrid).
type Devices struct {
	Groups []DeviceGroup
}

// DeviceGroup is one pipeline stage.
type DeviceGroup struct {
	Devices []string // split each layer's tensors when more than one
	Layers  int      // layers of the group (0: an even share of the rest)
}

// knownKinds are the device kinds this build can run.
var knownKinds = []string{"cpu"}

// ParseDevices parses a --devices spec. An empty spec is one CPU device.
func ParseDevices(spec string) (Devices, error) {
	if strings.TrimSpace(spec) == "" {
		return Devices{Groups: []DeviceGroup{{Devices: []string{"cpu:0"}}}}, nil
	}
	var d Devices
	seen := map[string]bool{}
	for gi, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			return Devices{}, fmt.Errorf("--devices %q: layer group %d is empty", spec, gi+1)
		}
		var g DeviceGroup
		if i := strings.IndexByte(part, '='); i >= 0 {
			n, err := strconv.Atoi(strings.TrimSpace(part[i+1:]))
			if err != nil || n < 1 {
				return Devices{}, fmt.Errorf("--devices %q: group %d: %q is not a layer count ≥ 1", spec, gi+1, part[i+1:])
			}
			g.Layers, part = n, part[:i]
		}
		for _, name := range strings.Split(part, "&") {
			name = strings.TrimSpace(name)
			if err := checkDevice(name); err != nil {
				return Devices{}, fmt.Errorf("--devices %q: %w", spec, err)
			}
			if seen[name] {
				return Devices{}, fmt.Errorf("--devices %q: device %s is listed twice", spec, name)
			}
			seen[name] = true
			g.Devices = append(g.Devices, name)
		}
		d.Groups = append(d.Groups, g)
	}
	return d, nil
}

// checkDevice validates one device name: KIND:INDEX.
func checkDevice(name string) error {
	kind, idx, ok := strings.Cut(name, ":")
	if name == "" {
		return fmt.Errorf("an empty device name")
	}
	known := false
	for _, k := range knownKinds {
		known = known || k == kind
	}
	if !known {
		return fmt.Errorf("unknown device %q (this build runs %s; write KIND:N, e.g. cpu:0)", name, strings.Join(knownKinds, ", "))
	}
	if n, err := strconv.Atoi(idx); !ok || err != nil || n < 0 || n > 1023 {
		return fmt.Errorf("device %q: want %s:N with N from 0 to 1023", name, kind)
	}
	return nil
}

// Names returns every device, groups in order.
func (d Devices) Names() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Devices...)
	}
	return out
}

// String writes the spec back in its canonical form.
func (d Devices) String() string {
	parts := make([]string, len(d.Groups))
	for i, g := range d.Groups {
		parts[i] = strings.Join(g.Devices, "&")
		if g.Layers > 0 {
			parts[i] += "=" + strconv.Itoa(g.Layers)
		}
	}
	return strings.Join(parts, ";")
}

// Threads splits total worker threads across the devices, in Names
// order: an even share each, the remainder to the first; every device
// gets at least 1, even when there are more devices than threads.
func (d Devices) Threads(total int) []int {
	n := len(d.Names())
	out := make([]int, n)
	for i := range out {
		out[i] = total / n
		if i < total%n {
			out[i]++
		}
		out[i] = max(out[i], 1)
	}
	return out
}

// layerRanges assigns layers [0, layers) to the groups: the explicit
// counts first, the rest shared evenly among the other groups (earlier
// groups take the remainder).
func (d Devices) layerRanges(layers int) ([][2]int, error) {
	fixed, free := 0, 0
	for _, g := range d.Groups {
		if g.Layers > 0 {
			fixed += g.Layers
		} else {
			free++
		}
	}
	if len(d.Groups) > layers {
		return nil, fmt.Errorf("--devices %s: %d layer groups for a model of %d layers", d, len(d.Groups), layers)
	}
	if fixed > layers || (free == 0 && fixed != layers) {
		return nil, fmt.Errorf("--devices %s: the groups' layer counts add up to %d; the model has %d layers", d, fixed, layers)
	}
	rest := layers - fixed
	if free > rest {
		return nil, fmt.Errorf("--devices %s: %d layers are left for %d groups without a count", d, rest, free)
	}
	out := make([][2]int, len(d.Groups))
	lo, k := 0, 0
	for i, g := range d.Groups {
		n := g.Layers
		if n == 0 {
			n = rest / free
			if k < rest%free {
				n++
			}
			k++
		}
		out[i] = [2]int{lo, lo + n}
		lo += n
	}
	return out, nil
}
