package model

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// finiteRows is how many rows of a matrix CheckFinite reads: evenly
// spaced, the first and the last among them.
const finiteRows = 16

// CheckFinite is the cheap load-time check that a weight holds no NaN or
// infinity: a vector is read whole, a matrix at finiteRows evenly spaced
// rows (a NaN anywhere else still shows in the logits, which the engine
// checks every step). Types it cannot decode (integer tensors) pass. The
// error names the tensor, the row and the column. A fault reading a
// memory-mapped tensor (a file truncated under weft) is an error too.
func CheckFinite(t *tensor.Tensor) (err error) {
	if len(t.Shape) == 0 || t.DType == tensor.I32 {
		return nil
	}
	cols := t.Shape[len(t.Shape)-1]
	rows := 1
	for _, d := range t.Shape[:len(t.Shape)-1] {
		rows *= d
	}
	rb, rerr := t.DType.RowBytes(cols)
	if rerr != nil || cols <= 0 || rows <= 0 || len(t.Data) < rows*rb {
		return nil // the binder reports malformed tensors
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tensor %s: reading its data failed (%v): was the checkpoint truncated?", t.Name, p)
		}
	}()
	buf := make([]float32, cols)
	check := func(r int) error {
		row := t.Data[r*rb : (r+1)*rb]
		if t.DType == tensor.F32 {
			for c := range cols {
				if v := math.Float32frombits(uint32(row[4*c]) | uint32(row[4*c+1])<<8 | uint32(row[4*c+2])<<16 | uint32(row[4*c+3])<<24); v != v || math.IsInf(float64(v), 0) {
					return fmt.Errorf("tensor %s [%s %v]: row %d column %d is %v: the checkpoint holds non-finite weights", t.Name, t.DType, t.Shape, r, c, v)
				}
			}
			return nil
		}
		if quant.Dequantize(t.DType, buf, row) != nil {
			return errSkip
		}
		for c, v := range buf {
			if v != v || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %s [%s %v]: row %d column %d is %v: the checkpoint holds non-finite weights", t.Name, t.DType, t.Shape, r, c, v)
			}
		}
		return nil
	}
	n := min(rows, finiteRows)
	for i := range n {
		r := 0
		if n > 1 {
			r = i * (rows - 1) / (n - 1)
		}
		if err := check(r); err == errSkip {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// errSkip ends a check of a type Dequantize cannot decode.
var errSkip = errors.New("skip")
