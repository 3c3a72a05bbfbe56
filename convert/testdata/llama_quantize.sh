#!/bin/sh
# Makes llama_quantize.sha256: the SHA-256 of llama-quantize's output for
# every preset on the F16 models of TestPresetsMatchLlamaQuantize.
#   LLAMA=/path/to/llama.cpp/build/bin sh convert/testdata/llama_quantize.sh
# (run from the repository root; llama.cpp c392e50, CPU build).
set -eu
LLAMA=${LLAMA:-/work/llama.cpp/build/bin}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test ./convert -run 'TestPresetsMatchLlamaQuantize$' -count=1 -args -preset-inputs "$dir" >/dev/null || true
out=convert/testdata/llama_quantize.sha256
echo "# llama-quantize (llama.cpp c392e50) on the F16 models of TestPresetsMatchLlamaQuantize; made by llama_quantize.sh" >"$out"
for model in synth tied; do
  for preset in Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL; do
    case "$model-$preset" in
      tied-Q4_1|tied-Q5_0|tied-Q5_1|tied-Q3_K_S|tied-Q4_K_S|tied-Q5_K_S) continue ;;
    esac
    "$LLAMA/llama-quantize" "$dir/$model-F16in.gguf" "$dir/$model-$preset.gguf" "$preset" >/dev/null 2>&1
    (cd "$dir" && sha256sum "$model-$preset.gguf") >>"$out"
  done
done
