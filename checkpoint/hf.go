package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// hfWeightFiles are the weight files OpenHF looks for, in order of preference.
var hfWeightFiles = []string{
	"model.safetensors.index.json",
	"model.safetensors",
	"pytorch_model.bin.index.json",
	"pytorch_model.bin",
}

// hfWeightGlobs are searched, in order, when no hfWeightFiles exists.
var hfWeightGlobs = []string{"*.safetensors", "pytorch_model*.bin"}

// OpenHF opens a Hugging Face model folder: a directory holding config.json
// and the weights, taken from the first of model.safetensors.index.json,
// model.safetensors, pytorch_model.bin.index.json and pytorch_model.bin that
// exists, or failing those from every *.safetensors file in the folder, or
// every pytorch_model*.bin (without an index, a tensor found in two files
// is an error).
//
// Meta is config.json decoded. JSON numbers written as integers that fit in
// an int64 become int64; all other numbers become float64; objects are
// map[string]any and arrays []any. Arch is the architecture as GGUF names
// it, from config.json's architectures or model_type (see HFArch). Format
// is that of the weight files and
// Path the directory.
func OpenHF(dir string) (Checkpoint, error) {
	cfgPath := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint %s: not a Hugging Face model folder: no config.json", dir)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	meta, arch, err := ParseHFConfig(cfgPath, raw)
	if err != nil {
		return nil, err
	}

	inner, err := openHFWeights(dir)
	if err != nil {
		return nil, err
	}
	c := &multi{path: dir, format: inner.Format(), arch: arch, meta: meta, parts: []Checkpoint{inner}, where: map[string]int{}}
	if m, ok := inner.(*multi); ok {
		// Flatten a sharded checkpoint rather than nest it.
		c.parts, c.where = m.parts, m.where
		c.infos = m.infos
		return c, nil
	}
	c.infos = inner.Infos()
	for _, inf := range c.infos {
		c.where[inf.Name] = 0
	}
	return c, nil
}

// ParseHFConfig decodes an HF config.json (named path in errors) as OpenHF
// does: the metadata and the architecture (see HFArch).
func ParseHFConfig(path string, raw []byte) (meta map[string]any, arch string, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil {
		return nil, "", fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if dec.More() {
		return nil, "", fmt.Errorf("checkpoint %s: data after the JSON object", path)
	}
	meta, _ = jsonValue(cfg).(map[string]any)
	if meta == nil {
		return nil, "", fmt.Errorf("checkpoint %s: not a JSON object", path)
	}
	if key, ok := nonFinite(meta, ""); ok {
		return nil, "", fmt.Errorf("checkpoint %s: %s: a number beyond float64's range", path, key)
	}
	return meta, HFArch(meta), nil
}

// hfClasses maps config.json's architectures (the model class) to the
// architecture names GGUF and weft's specs use.
var hfClasses = map[string]string{
	"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
	"Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2moe",
	"Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3moe",
	"GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3",
	"PhiForCausalLM": "phi2", "Phi3ForCausalLM": "phi3",
	"FalconForCausalLM": "falcon", "BloomForCausalLM": "bloom", "MptForCausalLM": "mpt",
	"GPT2LMHeadModel": "gpt2", "GPTNeoXForCausalLM": "gptneox", "Starcoder2ForCausalLM": "starcoder2",
	"StableLmForCausalLM": "stablelm", "Olmo2ForCausalLM": "olmo2",
	"BertModel": "bert", "NomicBertModel": "nomic-bert", "T5ForConditionalGeneration": "t5",
}

// hfModelTypes maps the model_type values that differ from the GGUF
// architecture name, for configs without an architectures list.
var hfModelTypes = map[string]string{
	"qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe", "gemma3_text": "gemma3",
	"phi": "phi2", "gpt_neox": "gptneox", "stablelm_epoch": "stablelm", "nomic_bert": "nomic-bert",
}

// HFArch names the architecture of an HF config (decoded as by
// ParseHFConfig) as GGUF does: the first of its architectures that weft
// knows (LlamaForCausalLM is llama, Qwen2MoeForCausalLM qwen2moe,
// PhiForCausalLM phi2...), else its model_type with the few that differ
// renamed (qwen2_moe is qwen2moe, gpt_neox gptneox...).
func HFArch(meta map[string]any) string {
	if list, ok := meta["architectures"].([]any); ok {
		for _, c := range list {
			if name, ok := c.(string); ok {
				if arch, ok := hfClasses[name]; ok {
					return arch
				}
			}
		}
	}
	mt, _ := meta["model_type"].(string)
	if arch, ok := hfModelTypes[mt]; ok {
		return arch
	}
	return mt
}

// nonFinite returns the path of the first number in v that decoded to an
// infinity (JSON allows 1e400; no hyperparameter means it).
func nonFinite(v any, at string) (string, bool) {
	switch x := v.(type) {
	case float64:
		return at, math.IsInf(x, 0)
	case []any:
		for i, e := range x {
			if k, ok := nonFinite(e, fmt.Sprintf("%s[%d]", at, i)); ok {
				return k, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := strconv.Quote(k)
			if at != "" {
				p = at + "." + p
			}
			if r, ok := nonFinite(x[k], p); ok {
				return r, true
			}
		}
	}
	return "", false
}

func openHFWeights(dir string) (Checkpoint, error) {
	for _, name := range hfWeightFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if strings.HasSuffix(name, ".index.json") {
			return OpenIndex(p)
		}
		return openPart(p)
	}
	var all []string
	for _, pattern := range hfWeightGlobs {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		if len(m) > 0 {
			all = m
			break
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("checkpoint %s: no weights found (looked for %s, %s)", dir, strings.Join(hfWeightFiles, ", "), strings.Join(hfWeightGlobs, ", "))
	}
	if len(all) == 1 {
		return openPart(all[0])
	}
	// Several weight files and no index: take them all, refusing a tensor
	// that appears twice.
	slices.Sort(all)
	c := &multi{path: dir, meta: map[string]any{}, where: map[string]int{}}
	for _, p := range all {
		part, err := openPart(p)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.parts = append(c.parts, part)
		c.format = part.Format()
		for _, inf := range part.Infos() {
			if j, dup := c.where[inf.Name]; dup {
				c.Close()
				return nil, fmt.Errorf("checkpoint %s: tensor %q is in both %s and %s", dir, inf.Name, filepath.Base(c.parts[j].Path()), filepath.Base(p))
			}
			c.where[inf.Name] = len(c.parts) - 1
			c.infos = append(c.infos, inf)
		}
		for k, v := range part.Meta() {
			c.meta[k] = v
		}
	}
	return c, nil
}
