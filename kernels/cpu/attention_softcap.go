package cpu

import "math"

// AttendHeadsSoftCap is AttendHeads with Gemma 2's soft-capping of the
// attention scores: each scaled score s becomes c·tanh(s/c) before the
// mask and the softmax (c > 0).
func AttendHeadsSoftCap(out, q []float32, kv *KV, p AttendParams, c float32, scratch []float32, h0, h1 int) {
	detected.attendHeadsSoftCap(out, q, kv, p, c, scratch, h0, h1)
}

func (k Kernels) attendHeadsSoftCap(out, q []float32, kv *KV, p AttendParams, c float32, scratch []float32, h0, h1 int) {
	hd := p.HeadDim
	group := p.Heads / p.KVHeads
	kvStride := p.KVHeads * hd
	n := p.N
	sc := scratch[:n]
	f16 := kv.F16()
	for h := h0; h < h1; h++ {
		kh := h / group
		o := out[h*hd : (h+1)*hd]
		pos := 0
		if f16 {
			k.roundF16(o, q[h*hd:(h+1)*hd]) // the query rounded to f16, held in o
			for s := range kv.K16 {
				rows := min(kv.Len[s], n-pos)
				if rows <= 0 {
					break
				}
				k.dotRowsF16(sc[pos:pos+rows], o, kv.K16[s][kh*hd:], kvStride, p.Batched)
				pos += rows
			}
		} else {
			for s := range kv.K {
				rows := min(kv.Len[s], n-pos)
				if rows <= 0 {
					break
				}
				k.dotRows(sc[pos:pos+rows], q[h*hd:(h+1)*hd], kv.K[s][kh*hd:], kvStride)
				pos += rows
			}
		}
		k.scale(sc, sc, p.Scale)
		for i, v := range sc {
			sc[i] = c * float32(math.Tanh(float64(v/c)))
		}
		mask(sc, p, h)
		if f16 {
			k.softmaxGG(sc)
			k.roundF16(sc, sc)
			if lanes := scratch[n:]; k.hasAxpyRot(hd) && len(lanes) >= 68*hd {
				k.attendV16Lanes(o, sc, kv, kh*hd, kvStride, p.Batched, lanes)
			} else {
				k.attendV16(o, sc, kv, kh*hd, kvStride, p.Batched)
			}
			continue
		}
		k.Softmax(sc)
		clear(o)
		pos = 0
		for s := range kv.V {
			rows := min(kv.Len[s], n-pos)
			if rows <= 0 {
				break
			}
			k.axpyRows(o, sc[pos:pos+rows], kv.V[s][kh*hd:], kvStride)
			pos += rows
		}
	}
}
