#include "workloads/transformer.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace meshsim::workloads {

const std::vector<ModelShape>& Models() {
  static const auto* models = new std::vector<ModelShape>{
      // GPT-3 175B (Brown et al. 2020): H = 12288, 96 heads of 128, 96 layers.
      {"gpt3", "GPT-3 175B: hidden 12288, 96 heads, FFN 4H, 96 layers", 12288, 96, 0, 96},
      // Megatron-Turing NLG 530B (Smith et al. 2022): H = 20480, 128 heads, 105 layers.
      {"megatron-nlg", "Megatron-Turing NLG 530B: hidden 20480, 128 heads, FFN 4H, 105 layers",
       20480, 128, 0, 105},
      // ATP Table 2 gives hidden size and heads per model and reports per-layer numbers, so
      // these models have one layer.
      {"atp-m1", "ATP Table 2 M1: hidden 2048, 16 heads, FFN 4H (per layer)", 2048, 16, 0, 1},
      {"atp-m2", "ATP Table 2 M2: hidden 4096, 32 heads, FFN 4H (per layer)", 4096, 32, 0, 1},
      {"atp-m3", "ATP Table 2 M3: hidden 8192, 64 heads, FFN 4H (per layer)", 8192, 64, 0, 1},
      {"atp-m4", "ATP Table 2 M4: hidden 12288, 96 heads, FFN 4H (per layer)", 12288, 96, 0, 1},
      // The resharding paper's GPT (MLSys'23 Table 3: 2.6B parameters): GPT-3 2.7B's shape
      // (Brown et al. 2020, Table 2.1), 12·H²·32 = 2.5B in the layers plus the embeddings.
      {"gpt-2.6b", "MLSys'23 GPT (2.6B): hidden 2560, 32 heads, FFN 4H, 32 layers", 2560, 32, 0,
       32},
      // The resharding paper's U-Transformer (Table 3: 2.1B parameters; a U-Net whose layers
      // carry attention, with skip connections from layer i to layer L−1−i). The paper gives no
      // shape; this stand-in has 13 attention layers over 4 resolution levels, 576 channels and
      // 16 heads (of 36 channels, so that 2, 4, 8 and 16-way tensor parallelism divide them) at
      // the top, each level a quarter of the tokens and twice the channels (workloads/stack.h):
      // 1.95B parameters in the layers.
      {"u-transformer",
       "MLSys'23 U-Transformer stand-in: 13 layers over 4 levels, hidden 576..4608, skips "
       "i -> 12-i",
       576, 16, 0, 13, 4},
  };
  return *models;
}

absl::StatusOr<ModelShape> FindModel(const std::string& name) {
  std::vector<std::string> names;
  for (const ModelShape& m : Models()) {
    if (m.name == name) return m;
    names.push_back(m.name);
  }
  return absl::NotFoundError(absl::StrFormat("--model: '%s' is not allowed; allowed: %s", name,
                                             absl::StrJoin(names, ", ")));
}

absl::StatusOr<ModelShape> CustomModel(int64_t hidden, int64_t heads, int64_t ffn, int64_t layers) {
  const auto positive = [](const char* key, int64_t v) {
    return v > 0 ? absl::OkStatus()
                 : absl::InvalidArgumentError(
                       absl::StrFormat("--%s: %d is not allowed; must be positive", key, v));
  };
  for (auto [key, v] :
       {std::pair{"hidden", hidden}, std::pair{"heads", heads}, std::pair{"layers", layers}}) {
    if (absl::Status s = positive(key, v); !s.ok()) return s;
  }
  if (ffn < 0) return positive("ffn", ffn);
  if (hidden % heads != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hidden: %d is not allowed; must be divisible by --heads %d", hidden, heads));
  }
  return ModelShape{"custom",
                    absl::StrFormat("hidden %d, %d heads, FFN %d, %d layers", hidden, heads,
                                    ffn > 0 ? ffn : 4 * hidden, layers),
                    hidden,
                    heads,
                    ffn,
                    layers};
}

std::vector<FcLayerShape> BlockFcLayers(const ModelShape& m, int64_t batch, int64_t seq) {
  const int64_t t = batch * seq, h = m.hidden, f = m.ffn_dim();
  return {
      {"qkv", 0, t, h, 3 * h, true},
      {"attn_out", 1, t, h, h, false},
      {"ffn_up", 2, t, h, f, true},
      {"ffn_down", 3, t, f, h, false},
  };
}

}  // namespace meshsim::workloads
