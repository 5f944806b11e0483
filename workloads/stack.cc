#include "workloads/stack.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace meshsim::workloads {

absl::StatusOr<LayerStack> StackOf(const ModelShape& model, int64_t batch, int64_t seq,
                                   int element_bytes) {
  LayerStack stack;
  const int n = static_cast<int>(model.layers);
  const LayerShape top = ShapeOf(model, batch, seq, element_bytes);
  if (model.unet_levels <= 0) {
    stack.layers.assign(n, top);
    return stack;
  }
  const int deepest = model.unet_levels - 1;
  const int64_t fold = int64_t{1} << (2 * deepest);  // 4^(levels − 1)
  if (seq % fold != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--seq: %d is not allowed with --model %s; its deepest level has a quarter of the "
        "tokens per level, so --seq must be a multiple of 4^%d = %d",
        seq, model.name, deepest, fold));
  }
  for (int i = 0; i < n; ++i) {
    const int level = std::min({i, n - 1 - i, deepest});
    LayerShape s = top;
    s.seq = seq >> (2 * level);
    s.hidden = top.hidden << level;
    s.heads = top.heads << level;
    s.ffn = 4 * s.hidden;
    stack.layers.push_back(s);
  }
  for (int i = 0; n - 1 - i > i + 1; ++i) stack.skips.push_back({i, n - 1 - i});
  return stack;
}

int64_t ActivationBytes(const LayerShape& s) {
  return s.batch * s.seq * s.hidden * s.element_bytes;
}

int64_t SavedActivationBytes(const LayerShape& s) {
  const int64_t t = s.tokens();
  return s.element_bytes *
         (8 * t * s.hidden + 2 * t * s.ffn_dim() + s.batch * s.heads * s.seq * s.seq);
}

int64_t LayerParameters(const LayerShape& s) {
  return 4 * s.hidden * s.hidden + 2 * s.hidden * s.ffn_dim();
}

}  // namespace meshsim::workloads
