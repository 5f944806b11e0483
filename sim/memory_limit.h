// How much memory this process may use before the kernel kills it: the machine's physical
// memory, or less when the cgroup it runs in (a container, a systemd slice, a batch scheduler's
// job) has a lower memory limit. The default budgets of --max-ops, --max-flows and
// --max-timeline-bytes (options.h) are fractions of it, so that a run too large for a 2 GiB
// container is refused with exit 2 instead of being OOM-killed.
//
// The cgroup is found as the kernel describes it: /proc/self/cgroup names the process's cgroup
// in each hierarchy ("0::/PATH" for cgroup v2, "N:...memory...:/PATH" for the v1 memory
// controller), /proc/self/mountinfo says where each hierarchy is mounted and which of its
// directories the mount shows (a container sees its own cgroup as the mount's root). The limit
// is the lowest of the cgroup's and its ancestors' up to the mount: v2 `memory.max` ("max" = no
// limit), v1 `memory.limit_in_bytes` (values of 2^60 and more, e.g. 9223372036854771712, = no
// limit). Both hierarchies are read when both are mounted (hybrid systems); a file missing or
// unreadable is no limit.
//
// Example:
//   const MemoryLimit& m = AvailableMemory();
//   m.bytes;        // 2147483648
//   m.Describe();   // "the 2.0 GiB cgroup limit"
#ifndef MESHSIM_SIM_MEMORY_LIMIT_H_
#define MESHSIM_SIM_MEMORY_LIMIT_H_

#include <cstdint>
#include <optional>
#include <string>

namespace meshsim::sim {

struct MemoryLimit {
  int64_t bytes = 0;
  // The cgroup file that set the limit, as read (under the root given to ReadCgroupMemoryLimit);
  // empty = the machine's physical memory.
  std::string file;

  bool from_cgroup() const { return !file.empty(); }
  // "the 2.0 GiB cgroup limit" or "the 23.5 GiB of physical memory", for messages.
  std::string Describe() const;
};

// The lowest memory limit of this process's cgroup and its ancestors, read from the files under
// `root` ("/" on a real system; tests pass a directory holding proc/self/cgroup,
// proc/self/mountinfo and the cgroup directories the mountinfo names). nullopt when no limit is
// set or nothing can be read. When mountinfo is missing or names no cgroup mount, the usual
// places are tried: sys/fs/cgroup (v2) and sys/fs/cgroup/memory (v1). Cost: reads a few small
// files, one per ancestor.
std::optional<MemoryLimit> ReadCgroupMemoryLimit(const std::string& root);

// sysconf(_SC_PHYS_PAGES) x page size.
int64_t PhysicalMemoryBytes();

// The physical memory, or the cgroup limit (ReadCgroupMemoryLimit("/")) when it is lower. Read
// once per process; thread-safe.
const MemoryLimit& AvailableMemory();

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_MEMORY_LIMIT_H_
