// teacher runs a GGUF through libllama (llama.cpp or ik_llama.cpp) once,
// teacher-forced: every token of the command line in one batch of one
// sequence, the logits of every position kept, an f32 KV cache, no flash
// attention (with -f16kv: an f16 KV cache and flash attention, for
// ik_llama.cpp, which refuses an f32 V cache without flash attention and
// has no flash attention over an f32 K cache). It prints {"n_vocab": N, "logits": [[...], ...]} on stdout,
// each logit with 9 significant digits (an f32 read back exactly).
//
//	teacher [-v] [-f16kv] MODEL.gguf TOKEN...
//
// Built and run by tools/archref (see its README); it is not part of weft.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *data) {
	(void)data;
	if (level == GGML_LOG_LEVEL_ERROR) {
		fputs(text, stderr);
	}
}

int main(int argc, char **argv) {
	int arg = 1, verbose = 0, f16kv = 0;
	for (; arg < argc && argv[arg][0] == '-'; arg++) {
		if (strcmp(argv[arg], "-v") == 0) {
			verbose = 1;
		} else if (strcmp(argv[arg], "-f16kv") == 0) {
			f16kv = 1;
		} else {
			break;
		}
	}
	if (!verbose) {
		llama_log_set(quiet, NULL);
	}
	if (argc - arg < 2) {
		fprintf(stderr, "usage: teacher [-v] [-f16kv] MODEL.gguf TOKEN...\n");
		return 2;
	}
	const char *path = argv[arg++];
	int n = argc - arg;

	llama_backend_init();
	struct llama_model_params mp = llama_model_default_params();
	mp.n_gpu_layers = 0;
	struct llama_model *model = llama_model_load_from_file(path, mp);
	if (model == NULL) {
		fprintf(stderr, "teacher: cannot load %s\n", path);
		return 1;
	}
	// llama_n_vocab takes the model in ik_llama.cpp and the vocabulary in
	// llama.cpp; this pair means the same in both.
	int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

	struct llama_context_params cp = llama_context_default_params();
	cp.n_ctx = 0; // the model's own context
	if (n > llama_n_ctx_train(model)) {
		cp.n_ctx = n;
	}
	cp.n_batch = n;
	cp.n_ubatch = n;
	cp.n_seq_max = 1;
	cp.n_threads = 2;
	cp.n_threads_batch = 2;
	cp.type_k = f16kv ? GGML_TYPE_F16 : GGML_TYPE_F32;
	cp.type_v = f16kv ? GGML_TYPE_F16 : GGML_TYPE_F32;
	cp.flash_attn = f16kv ? true : false;
	struct llama_context *ctx = llama_init_from_model(model, cp);
	if (ctx == NULL) {
		fprintf(stderr, "teacher: cannot make a context for %s\n", path);
		return 1;
	}

	struct llama_batch b = llama_batch_init(n, 0, 1);
	for (int i = 0; i < n; i++) {
		char *end;
		long tok = strtol(argv[arg + i], &end, 10);
		if (*end != '\0' || tok < 0 || tok >= n_vocab) {
			fprintf(stderr, "teacher: token %s is not an id below %d\n", argv[arg + i], n_vocab);
			return 2;
		}
		b.token[i] = (llama_token)tok;
		b.pos[i] = i;
		b.n_seq_id[i] = 1;
		b.seq_id[i][0] = 0;
		b.logits[i] = 1;
	}
	b.n_tokens = n;
	int rc = llama_decode(ctx, b);
	if (rc != 0) {
		fprintf(stderr, "teacher: llama_decode returned %d\n", rc);
		return 1;
	}

	printf("{\"n_vocab\":%d,\"logits\":[", n_vocab);
	for (int i = 0; i < n; i++) {
		const float *row = llama_get_logits_ith(ctx, i);
		if (row == NULL) {
			fprintf(stderr, "teacher: no logits for position %d\n", i);
			return 1;
		}
		printf(i ? ",\n[" : "\n[");
		for (int j = 0; j < n_vocab; j++) {
			printf(j ? ",%.9g" : "%.9g", row[j]);
		}
		printf("]");
	}
	printf("]}\n");

	llama_batch_free(b);
	llama_free(ctx);
	llama_free_model(model);
	llama_backend_free();
	return 0;
}
