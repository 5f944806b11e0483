#include "core/large_vector.h"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#define MESHSIM_LARGE_VECTOR_MAPS 1
#else
#define MESHSIM_LARGE_VECTOR_MAPS 0
#endif

namespace meshsim::core::large_vector_internal {
namespace {

// Tables from this size on get their own mapping (smaller ones stay in malloc's heap, where a
// copy costs little), a whole number of pages.
constexpr size_t kMapBytes = size_t{1} << 20;
constexpr size_t kPageBytes = size_t{4} << 10;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

bool Mapped(size_t bytes) { return MESHSIM_LARGE_VECTOR_MAPS && bytes >= kMapBytes; }

}  // namespace

size_t Rounded(size_t bytes) {
  if (!Mapped(bytes)) return bytes;
  return RoundUp(bytes, kPageBytes);
}

void* Resize(void* old, size_t old_bytes, size_t keep, size_t bytes) {
#if MESHSIM_LARGE_VECTOR_MAPS
  if (Mapped(bytes)) {
    void* p;
    if (old != nullptr && Mapped(old_bytes)) {
      // The kernel moves the pages (or extends in place): no byte is copied.
      p = mremap(old, old_bytes, bytes, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) return nullptr;
    } else {
      p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      if (keep > 0) std::memcpy(p, old, keep);
      std::free(old);
    }
    return p;
  }
#endif
  (void)old_bytes;
  (void)keep;
  return std::realloc(old, bytes);
}

void Free(void* p, size_t bytes) {
  if (p == nullptr) return;
#if MESHSIM_LARGE_VECTOR_MAPS
  if (Mapped(bytes)) {
    munmap(p, bytes);
    return;
  }
#endif
  std::free(p);
}

void OutOfMemory() { throw std::bad_alloc(); }

}  // namespace meshsim::core::large_vector_internal
