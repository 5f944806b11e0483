// Propagation helpers for absl::Status / absl::StatusOr at boundaries user input can break.
//
// Example:
//   absl::StatusOr<Mesh> ParseMesh(const std::string& s);
//   absl::Status Load() {
//     MESHSIM_ASSIGN_OR_RETURN(Mesh mesh, ParseMesh(text));
//     MESHSIM_RETURN_IF_ERROR(Validate(mesh));
//     return absl::OkStatus();
//   }
#ifndef MESHSIM_CORE_STATUS_MACROS_H_
#define MESHSIM_CORE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MESHSIM_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status meshsim_status_ = (expr);           \
    if (!meshsim_status_.ok()) return meshsim_status_; \
  } while (0)

#define MESHSIM_STATUS_CONCAT_INNER(a, b) a##b
#define MESHSIM_STATUS_CONCAT(a, b) MESHSIM_STATUS_CONCAT_INNER(a, b)

#define MESHSIM_ASSIGN_OR_RETURN(lhs, expr) \
  MESHSIM_ASSIGN_OR_RETURN_IMPL(MESHSIM_STATUS_CONCAT(meshsim_statusor_, __LINE__), lhs, expr)

#define MESHSIM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // MESHSIM_CORE_STATUS_MACROS_H_
