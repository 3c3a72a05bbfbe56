package main

import (
	"io"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/internal/progress"
)

// progressTo returns a progress reporter drawing a byte-count bar on w when
// w is a terminal (silent otherwise); done finishes the line.
func progressTo(w io.Writer, label string) (start convert.ProgressFunc, done func()) {
	var bar *progress.Bar
	start = func(total int64) convert.Progress {
		bar = progress.New(w, label, total).Bytes()
		return bar
	}
	done = func() {
		if bar != nil {
			bar.Done()
		}
	}
	return start, done
}
