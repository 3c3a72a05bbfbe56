package tokenizer

import (
	"sync"
	"testing"
)

// TestConcurrentEncode encodes from several goroutines at once (run with
// -race): results must equal the sequential ones.
func TestConcurrentEncode(t *testing.T) {
	text := benchText(20000, true)
	for _, vv := range loadVocabVectors(t) {
		tk, err := FromGGUF(vv.meta)
		if err != nil {
			t.Fatal(err)
		}
		want, err := tk.Encode(text, EncodeOptions{AddSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 3; i++ {
					got, err := tk.Encode(text, EncodeOptions{AddSpecial: true})
					if err != nil || !equalIDs(got, want) {
						errs <- vv.name
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for name := range errs {
			t.Errorf("%s: concurrent Encode differs from sequential", name)
		}
	}
}
