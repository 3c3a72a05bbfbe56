package graph

import (
	"encoding/json"
	"fmt"
	"os"
)

// ProfileFormat names the format of a Profile file.
const ProfileFormat = "weft-profile/1"

// Profile is the time each node of a model's graph took over a timed
// decode (weft bench --profile-out), for the graph page's overlay.
type Profile struct {
	Format string         `json:"format"` // ProfileFormat
	Model  string         `json:"model"`
	Tokens int            `json:"tokens"` // decode tokens timed
	Nodes  []ProfiledNode `json:"nodes"`
}

// ProfiledNode is one node's time in a Profile.
type ProfiledNode struct {
	ID    int    `json:"id"`
	Op    string `json:"op"`
	Name  string `json:"name"`
	Layer int    `json:"layer"`
	NS    int64  `json:"ns"`
}

// ReadProfile reads a Profile file.
func ReadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if p.Format != ProfileFormat {
		return nil, fmt.Errorf("profile %s: format %q, want %q (from weft bench --profile-out)", path, p.Format, ProfileFormat)
	}
	return &p, nil
}

// matches reports whether p was taken on a graph shaped like g: every
// profiled node exists in g with the same op and name.
func (p *Profile) matches(g *Graph) error {
	byID := map[int]*Node{}
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	for _, pn := range p.Nodes {
		n, ok := byID[pn.ID]
		if !ok || n.Op.Name != pn.Op || n.Name != pn.Name {
			return fmt.Errorf("profile node %d (%s %s) is not in this graph: was the profile taken with the same model, spec, --set and --devices?", pn.ID, pn.Op, pn.Name)
		}
	}
	return nil
}
