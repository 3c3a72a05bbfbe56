package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/weftrun/weft/tensor"
)

// multi is a Checkpoint made of several files (the shards of a sharded
// checkpoint), optionally dressed as a Hugging Face folder.
type multi struct {
	path   string
	format string
	arch   string
	meta   map[string]any
	parts  []Checkpoint
	infos  []Info
	where  map[string]int // tensor name → index into parts
	closed bool
}

func (c *multi) Path() string         { return c.path }
func (c *multi) Format() string       { return c.format }
func (c *multi) Arch() string         { return c.arch }
func (c *multi) Meta() map[string]any { return c.meta }
func (c *multi) Infos() []Info        { return cloneInfos(c.infos) }

func (c *multi) Tensor(name string) (*tensor.Tensor, error) {
	if c.closed {
		return nil, fmt.Errorf("checkpoint %s: tensor %q: %w", c.path, name, ErrClosed)
	}
	i, ok := c.where[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint %s: no tensor %q", c.path, name)
	}
	return c.parts[i].Tensor(name)
}

func (c *multi) Close() error {
	c.closed = true
	var errs []error
	for _, p := range c.parts {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// openPart opens one shard, choosing the reader by the file's name.
func openPart(path string) (Checkpoint, error) {
	if strings.HasSuffix(strings.ToLower(path), ".safetensors") {
		return OpenSafetensors(path)
	}
	return OpenPyTorch(path)
}

// shardIndex is the JSON of model.safetensors.index.json and
// pytorch_model.bin.index.json.
type shardIndex struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// OpenIndex opens a sharded checkpoint through its index file
// (model.safetensors.index.json or pytorch_model.bin.index.json), whose
// weight_map names the shard of every tensor. The shards, which must lie
// beside the index, are opened as safetensors when their names end in
// .safetensors and as PyTorch checkpoints otherwise.
//
// The index and the shards must agree exactly: a tensor the index maps to a
// shard that lacks it, a tensor of a shard that the index does not map
// there, and a missing shard are errors naming the tensor and the file.
// Infos lists the shards in name order, each in its file order. Meta holds
// the index's metadata (numbers as int64 or float64, see OpenHF) over the
// shards' own metadata.
func OpenIndex(path string) (Checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var idx shardIndex
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("checkpoint index %s: %w", path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("checkpoint index %s: no weight_map", path)
	}
	c, err := openShards(path, filepath.Dir(path), idx.WeightMap)
	if err != nil {
		return nil, err
	}
	for k, v := range jsonValue(idx.Metadata).(map[string]any) {
		c.meta[k] = v
	}
	return c, nil
}

func openShards(indexPath, dir string, weightMap map[string]string) (_ *multi, err error) {
	// The first tensor (by name) of each shard, to name in errors.
	first := map[string]string{}
	for name, file := range weightMap {
		if f, ok := first[file]; !ok || name < f {
			first[file] = name
		}
	}
	files := make([]string, 0, len(first))
	for f := range first {
		if !filepath.IsLocal(f) {
			return nil, fmt.Errorf("checkpoint index %s: tensor %q: shard %q is not a file beside the index", indexPath, first[f], f)
		}
		files = append(files, f)
	}
	slices.Sort(files)
	c := &multi{path: indexPath, meta: map[string]any{}, where: map[string]int{}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for _, f := range files {
		part, err := openPart(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("checkpoint index %s: shard %s (for tensor %q): %w", indexPath, f, first[f], err)
		}
		c.parts = append(c.parts, part)
		if c.format == "" {
			c.format = part.Format()
		} else if c.format != part.Format() {
			return nil, fmt.Errorf("checkpoint index %s: shard %s is %s but the shards before it are %s", indexPath, f, part.Format(), c.format)
		}
		for k, v := range part.Meta() {
			c.meta[k] = v
		}
		for _, inf := range part.Infos() {
			want, listed := weightMap[inf.Name]
			switch {
			case !listed:
				return nil, fmt.Errorf("checkpoint index %s: tensor %q of shard %s has no entry in the index's weight_map", indexPath, inf.Name, f)
			case want != f:
				return nil, fmt.Errorf("checkpoint index %s: tensor %q is in shard %s but the index maps it to %s", indexPath, inf.Name, f, want)
			}
			c.where[inf.Name] = len(c.parts) - 1
			c.infos = append(c.infos, inf)
		}
	}
	if len(c.where) != len(weightMap) {
		names := make([]string, 0, len(weightMap))
		for name := range weightMap {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if _, ok := c.where[name]; !ok {
				return nil, fmt.Errorf("checkpoint index %s: the index maps tensor %q to shard %s, which has no such tensor", indexPath, name, weightMap[name])
			}
		}
	}
	return c, nil
}

// jsonValue converts a value decoded with json.Decoder.UseNumber: a number
// written as an integer that fits becomes int64, any other number float64;
// objects and arrays are converted throughout. A nil map becomes an empty one.
func jsonValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x)
		}
		return out
	case nil:
		return nil
	}
	return v
}
