package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
)

// specFlags are weft run's speculative decoding flags (llama.cpp's names
// where it has the feature).
type specFlags struct {
	ngram      int
	draftModel string
	max, min   int
}

// Speculation defaults: off unless asked for (on the 2-core machine of
// docs/performance.md a verify step of k tokens costs nearly k plain
// steps, and no drafter made decoding faster), and when asked for, the
// draft length that lost least there (4), which the engine shortens
// further after rejections.
const (
	defaultDraftMax = 4
	defaultDraftMin = 1
)

func addSpecFlags(fs *flag.FlagSet) *specFlags {
	f := &specFlags{}
	fs.IntVar(&f.ngram, "spec-ngram", 0, "speculative decoding by prompt lookup: draft the tokens that followed the latest earlier occurrence of the last N tokens (0: off; 3 is a good N)")
	fs.StringVar(&f.draftModel, "model-draft", "", "speculative decoding with this smaller draft model (same vocabulary)")
	fs.IntVar(&f.max, "draft-max", defaultDraftMax, "speculative decoding: most tokens drafted per step")
	fs.IntVar(&f.min, "draft-min", defaultDraftMin, "speculative decoding: fewer drafted tokens than this make a plain step")
	return f
}

// on reports whether speculation was asked for.
func (f *specFlags) on() bool { return f.ngram > 0 || f.draftModel != "" }

// check validates the flags against the run's other options.
func (f *specFlags) check(beams, choices, keep int, forced bool) error {
	switch {
	case f.ngram < 0 || f.ngram > 64:
		return fmt.Errorf("--spec-ngram %d (0 to 64)", f.ngram)
	case f.ngram > 0 && f.draftModel != "":
		return errors.New("--spec-ngram and --model-draft both draft: pick one")
	case f.max < 1 || f.max > 256:
		return fmt.Errorf("--draft-max %d (1 to 256)", f.max)
	case f.min < 0 || f.min > f.max:
		return fmt.Errorf("--draft-min %d (0 to --draft-max %d)", f.min, f.max)
	case !f.on():
		return nil
	case beams > 0 || choices > 1:
		return errors.New("speculative decoding serves a single sequence, not --beams or --choices")
	case keep >= 0:
		return errors.New("speculative decoding and --keep cannot be combined")
	case forced:
		return errors.New("speculative decoding and --force-tokens cannot be combined")
	}
	return nil
}

// drafter returns the run's drafter (nil without speculation) and a
// function that releases it. A draft model is loaded with target's
// engine options and must share its vocabulary.
func (f *specFlags) drafter(target *model.Model, opt model.EngineOptions) (scheduler.Drafter, func(), error) {
	switch {
	case f.ngram > 0:
		return scheduler.NGramDrafter{N: f.ngram}, func() {}, nil
	case f.draftModel == "":
		return nil, func() {}, nil
	}
	dm, err := model.Load(model.Options{Path: f.draftModel})
	if err != nil {
		return nil, nil, fmt.Errorf("--model-draft: %w", err)
	}
	if dm.Tokenizer != nil && target.Tokenizer != nil && dm.Tokenizer.VocabSize() != target.Tokenizer.VocabSize() {
		dm.Close()
		return nil, nil, fmt.Errorf("--model-draft %s: its vocabulary has %d tokens, the model's %d", f.draftModel, dm.Tokenizer.VocabSize(), target.Tokenizer.VocabSize())
	}
	opt.Devices, opt.MicroBatches = "", 1
	opt.Context = min(opt.Context, dm.Context())
	e, err := dm.NewEngine(opt)
	if err != nil {
		dm.Close()
		return nil, nil, fmt.Errorf("--model-draft: %w", err)
	}
	return &scheduler.ModelDrafter{Engine: e}, func() { e.Close(); dm.Close() }, nil
}
