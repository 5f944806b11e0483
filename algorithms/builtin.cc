// The one list of built-in algorithm plugins, in display order. Each plugin's own file defines
// `AlgorithmInfo <Name>Plugin()`: its name, description, typed parameters and factory. Adding a
// plugin = its file and one line here (docs/plugins.md); the registry (registry.cc) checks the
// entries.
#include "algorithms/registry.h"

// X(Name): the plugin whose file defines NamePlugin().
#define MESHSIM_BUILTIN_ALGORITHMS(X)                                                        \
  X(MeshSlice)  /* gemm2d/meshslice.cc */                                                    \
  X(Collective) /* gemm2d/collective.cc */                                                   \
  X(Wang)       /* gemm2d/wang.cc */                                                         \
  X(Summa)      /* gemm2d/summa.cc */                                                        \
  X(Cannon)     /* gemm2d/cannon.cc */                                                       \
  X(Tp1d)       /* tp1d/tp1d.cc */                                                           \
  X(Fsdp)       /* tp1d/fsdp.cc */                                                           \
  X(Example)    /* examples/example.cc */                                                    \
  /* Layer plugins (--workload layer): one whole transformer layer, forward and backward. */ \
  X(Atp)      /* atp/atp.cc */                                                               \
  X(Megatron) /* atp/atp.cc */                                                               \
  X(Tp2d)     /* atp/tp2d.cc */

namespace meshsim::algorithms {

#define MESHSIM_DECLARE_PLUGIN(Name) AlgorithmInfo Name##Plugin();
MESHSIM_BUILTIN_ALGORITHMS(MESHSIM_DECLARE_PLUGIN)
#undef MESHSIM_DECLARE_PLUGIN

std::vector<AlgorithmInfo> BuiltinAlgorithms() {
#define MESHSIM_PLUGIN_ENTRY(Name) Name##Plugin(),
  return {MESHSIM_BUILTIN_ALGORITHMS(MESHSIM_PLUGIN_ENTRY)};
#undef MESHSIM_PLUGIN_ENTRY
}

}  // namespace meshsim::algorithms
