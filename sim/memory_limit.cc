#include "sim/memory_limit.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace meshsim::sim {

namespace {

// A v1 limit this large is the kernel's "unlimited" (LONG_MAX rounded down to a page).
constexpr int64_t kNoLimitFrom = int64_t{1} << 60;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto octal = [&](size_t j) { return j < s.size() && s[j] >= '0' && s[j] <= '7'; };
    if (s[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Where a cgroup hierarchy is mounted: the directory the mount shows (its root inside the
// hierarchy) and the mount point.
struct Mount {
  std::string root;
  std::string point;
};

// The mounts of cgroup v2 and of the v1 memory controller in /proc/self/mountinfo, e.g.
// "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory".
void FindMounts(const std::string& mountinfo, std::optional<Mount>* v2, std::optional<Mount>* v1) {
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n')) {
    const std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash < 5 || dash + 1 >= f.size()) continue;
    const std::string& type = f[dash + 1];
    const Mount m{Unescape(f[3]), Unescape(f[4])};
    if (type == "cgroup2" && !v2->has_value()) *v2 = m;
    if (type == "cgroup" && dash + 3 < f.size() && !v1->has_value()) {
      for (absl::string_view opt : absl::StrSplit(f[dash + 3], ',')) {
        if (opt == "memory") *v1 = m;
      }
    }
  }
}

// The cgroup paths of /proc/self/cgroup: "0::/PATH" (v2) and the line whose controllers include
// memory (v1).
void FindPaths(const std::string& cgroup, std::optional<std::string>* v2,
               std::optional<std::string>* v1) {
  for (absl::string_view line : absl::StrSplit(cgroup, '\n')) {
    const std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    if (f[0] == "0" && f[1].empty()) *v2 = f[2];
    for (absl::string_view c : absl::StrSplit(f[1], ',')) {
      if (c == "memory") *v1 = f[2];
    }
  }
}

// A limit file's value in bytes; nullopt for "max", unlimited, malformed or non-positive.
std::optional<int64_t> ParseLimit(const std::string& text) {
  const std::string v(absl::StripAsciiWhitespace(text));
  int64_t bytes = 0;
  if (v == "max" || !absl::SimpleAtoi(v, &bytes) || bytes <= 0 || bytes >= kNoLimitFrom) {
    return std::nullopt;
  }
  return bytes;
}

// The lowest `file` limit from the cgroup `path`'s directory up to the mount point.
void LowestOnPath(const std::string& root, const Mount& mount, const std::string& path,
                  const char* file, std::optional<MemoryLimit>* best) {
  // The directory of `path` under the mount: the path relative to the mount's root; a path
  // outside it (an inconsistent view) falls back to the mount point alone.
  std::string rel;
  if (mount.root == "/") {
    rel = path;
  } else if (path == mount.root || path.rfind(mount.root + "/", 0) == 0) {
    rel = path.substr(mount.root.size());
  }
  std::string point = mount.point;  // Without a trailing slash: "" for "/".
  while (!point.empty() && point.back() == '/') point.pop_back();
  std::string dir = point + (rel == "/" ? "" : rel);
  const std::string base = root == "/" ? "" : root;
  while (true) {
    const std::string name = absl::StrCat(base, dir, "/", file);
    if (const std::optional<std::string> text = ReadFile(name)) {
      if (const std::optional<int64_t> bytes = ParseLimit(*text)) {
        if (!best->has_value() || *bytes < (*best)->bytes) *best = MemoryLimit{*bytes, name};
      }
    }
    if (dir.size() <= point.size()) break;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash < point.size()) break;
    dir.resize(slash);
  }
}

}  // namespace

std::string MemoryLimit::Describe() const {
  const double gib = static_cast<double>(bytes) / double(int64_t{1} << 30);
  return from_cgroup() ? absl::StrFormat("the %.1f GiB cgroup limit", gib)
                       : absl::StrFormat("the %.1f GiB of physical memory", gib);
}

std::optional<MemoryLimit> ReadCgroupMemoryLimit(const std::string& root) {
  const std::string base = root == "/" ? "" : root;
  std::optional<std::string> v2_path, v1_path;
  if (const std::optional<std::string> cgroup = ReadFile(base + "/proc/self/cgroup")) {
    FindPaths(*cgroup, &v2_path, &v1_path);
  }
  if (!v2_path.has_value() && !v1_path.has_value()) return std::nullopt;
  std::optional<Mount> v2_mount, v1_mount;
  if (const std::optional<std::string> mountinfo = ReadFile(base + "/proc/self/mountinfo")) {
    FindMounts(*mountinfo, &v2_mount, &v1_mount);
  }
  if (!v2_mount.has_value() && !v1_mount.has_value()) {
    v2_mount = Mount{"/", "/sys/fs/cgroup"};
    v1_mount = Mount{"/", "/sys/fs/cgroup/memory"};
  }
  std::optional<MemoryLimit> best;
  if (v2_path.has_value() && v2_mount.has_value()) {
    LowestOnPath(root, *v2_mount, *v2_path, "memory.max", &best);
  }
  if (v1_path.has_value() && v1_mount.has_value()) {
    LowestOnPath(root, *v1_mount, *v1_path, "memory.limit_in_bytes", &best);
  }
  return best;
}

int64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  // Unknown (never on Linux): assume 16 GiB rather than refuse everything.
  if (pages <= 0 || page <= 0) return int64_t{16} << 30;
  return int64_t{pages} * page;
}

const MemoryLimit& AvailableMemory() {
  static const MemoryLimit* const memory = [] {
    MemoryLimit m{PhysicalMemoryBytes(), ""};
    const std::optional<MemoryLimit> cgroup = ReadCgroupMemoryLimit("/");
    if (cgroup.has_value() && cgroup->bytes < m.bytes) m = *cgroup;
    return new MemoryLimit(m);
  }();
  return *memory;
}

}  // namespace meshsim::sim
