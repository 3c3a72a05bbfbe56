#!/bin/sh
# Makes kq-PRESET.f32, the goldens of TestKQuantLogitsMatchLlama: llama.cpp's
# logits on the files llama-quantize makes from the test's F16 model;
# kq-F16-long.f32, TestRepackPrefillLogits's reference: that F16 model's
# logits for a 24-token prompt (rpPrompt, rpForced); and
# bf16.f32, TestBF16LogitsMatchLlama's, on its BF16 model (made on a CPU
# with AVX512_BF16 and no AMX: the golden holds that machine's order).
#   LLAMA=/path/to/llama.cpp sh convert/testdata/llama_logits.sh
# (run from the repository root; llama.cpp c392e50, CPU build in
# $LLAMA/build; the prompt and forced ids are kqPrompt and kqForced).
set -eu
LLAMA=${LLAMA:-/work/llama.cpp}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
g++ -O2 -std=c++17 -I"$LLAMA/include" -I"$LLAMA/ggml/include" convert/testdata/llama_logits.cpp \
  -L"$LLAMA/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$LLAMA/build/bin" -o "$dir/llama_logits"
go test ./convert -run 'Test(KQuant|BF16)LogitsMatchLlama$' -count=1 -args -preset-inputs "$dir" >/dev/null || true
for preset in Q2_K Q3_K_S Q4_K_M Q5_K_M Q6_K IQ4_NL Q5_0 Q4_1 Q5_1; do
  "$LLAMA/build/bin/llama-quantize" "$dir/kq-F16in.gguf" "$dir/kq-$preset.gguf" "$preset" >/dev/null 2>&1
  "$dir/llama_logits" "$dir/kq-$preset.gguf" "convert/testdata/kq-$preset.f32" \
    1,100,57,200,33,7,150,250 12,99,180,41,5,77,230,3 2>/dev/null
done
"$dir/llama_logits" "$dir/kq-F16in.gguf" convert/testdata/kq-F16-long.f32 \
  1,100,57,200,33,7,150,250,19,88,140,61,222,5,171,93,38,245,120,66,11,199,130,77 12,99,180,41,5,77,230,3 2>/dev/null
"$dir/llama_logits" "$dir/bf16.gguf" convert/testdata/bf16.f32 \
  1,100,57,200,33,7,150,250 12,99,180,41,5,77,230,3 2>/dev/null
