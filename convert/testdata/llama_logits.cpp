// llama_logits: teacher-forced logits from llama.cpp's CPU build, for the
// goldens of TestKQuantLogitsMatchLlama (see llama_logits.sh).
//
//   llama_logits MODEL.gguf OUT.f32 PROMPT_IDS FORCED_IDS
//
// PROMPT_IDS and FORCED_IDS are comma-separated token ids. The prompt is
// decoded as one batch; then each forced token is fed alone. OUT gets one
// row of n_vocab little-endian float32 logits after the prompt and one
// after each forced token. Default context parameters (F16 KV cache), one
// thread.
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

static std::vector<llama_token> parse_ids(const char * s) {
    std::vector<llama_token> ids;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            ids.push_back((llama_token) std::atoi(item.c_str()));
        }
    }
    return ids;
}

int main(int argc, char ** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s MODEL.gguf OUT.f32 PROMPT_IDS FORCED_IDS\n", argv[0]);
        return 2;
    }
    std::vector<llama_token> prompt = parse_ids(argv[3]);
    std::vector<llama_token> forced = parse_ids(argv[4]);
    llama_backend_init();
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (model == nullptr) {
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 256;
    cp.n_batch = 256;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    llama_context * ctx = llama_init_from_model(model, cp);
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    FILE * out = std::fopen(argv[2], "wb");
    if (ctx == nullptr || out == nullptr) {
        return 1;
    }
    std::vector<llama_token> next = prompt;
    for (size_t step = 0; step <= forced.size(); step++) {
        if (llama_decode(ctx, llama_batch_get_one(next.data(), (int32_t) next.size())) != 0) {
            std::fprintf(stderr, "decode failed at step %zu\n", step);
            return 1;
        }
        std::fwrite(llama_get_logits_ith(ctx, -1), sizeof(float), n_vocab, out);
        if (step < forced.size()) {
            next.assign(1, forced[step]);
        }
    }
    std::fclose(out);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
