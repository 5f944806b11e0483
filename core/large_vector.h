// LargeVector<T>: a contiguous, growable array of plain data for the tables a run keeps by the
// million (timeline rows, counter samples), grown without copying.
//
// std::vector doubles by allocating a new buffer, copying and freeing the old one: a table of
// 300 MB touches about twice its size in fresh pages and copies it once on the way. Profiled on
// `BM_Gpt3Block256` (2.0 M rows, 6.6 M samples), that growth was a quarter of the run's CPU —
// page faults on new buffers and unmapping old ones (447 k page faults for 3 runs; 218 k now).
// LargeVector keeps a large table (1 MiB on) in an anonymous mapping of its own and grows it with
// mremap(2), which moves the pages rather than their bytes; smaller tables, and every table on a
// system without mremap, use malloc/realloc. (Transparent huge pages were tried: 10 k faults
// instead of 218 k, but clearing the 2 MiB pages made the run no faster on average and far
// noisier, 435–623 ms against 514–534 ms.)
//
// The interface is std::vector's subset that these tables use; T must be trivially copyable
// (elements are moved by the kernel or realloc, never by constructors).
//
// Example:
//   LargeVector<TimelineRow> rows;
//   rows.push_back(row);
//   for (const TimelineRow& r : rows) ...;
//   std::span<const TimelineRow> view = rows;
#ifndef MESHSIM_CORE_LARGE_VECTOR_H_
#define MESHSIM_CORE_LARGE_VECTOR_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <utility>

namespace meshsim::core {

namespace large_vector_internal {
// Storage of `bytes` bytes (a value Rounded() returned, larger than `old_bytes`) holding the
// first `keep` bytes of `old` (storage of `old_bytes` bytes obtained here, or null). Returns null
// when memory is exhausted; `old` then stays valid.
void* Resize(void* old, size_t old_bytes, size_t keep, size_t bytes);
void Free(void* p, size_t bytes);
// The size of the storage Resize gives for at least `bytes` bytes: `bytes` itself for small
// tables, a multiple of the page or of 2 MiB for mapped ones.
size_t Rounded(size_t bytes);
[[noreturn]] void OutOfMemory();  // Throws std::bad_alloc, as std::vector would.
}  // namespace large_vector_internal

template <typename T>
class LargeVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "LargeVector moves its elements as bytes");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  LargeVector() = default;
  LargeVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  template <typename It>
  LargeVector(It first, It last) {
    assign(first, last);
  }
  LargeVector(const LargeVector& other) { assign(other.begin(), other.end()); }
  LargeVector(LargeVector&& other) noexcept { swap(other); }
  LargeVector& operator=(const LargeVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  LargeVector& operator=(LargeVector&& other) noexcept {
    LargeVector(std::move(other)).swap(*this);
    return *this;
  }
  ~LargeVector() { large_vector_internal::Free(data_, bytes_); }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT: a view, like vector's

  void reserve(size_t n) {
    if (n > capacity_) Reallocate(n);
  }
  void push_back(const T& v) {
    if (size_ == capacity_) Reallocate(std::max<size_t>(2 * capacity_, 1));
    data_[size_++] = v;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() { --size_; }
  // Appends [first, last) (std::vector's insert at end()).
  template <typename It>
  void append(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (size_ + n > capacity_) Reallocate(std::max(size_ + n, 2 * capacity_));
    for (; first != last; ++first) data_[size_++] = *first;
  }
  void resize(size_t n) { resize(n, T{}); }
  void resize(size_t n, const T& v) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = v;
    size_ = n;
  }
  void assign(size_t n, const T& v) {
    size_ = 0;
    resize(n, v);
  }
  template <typename It>
  void assign(It first, It last) {
    size_ = 0;
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) data_[size_++] = *first;
  }
  void clear() { size_ = 0; }
  void swap(LargeVector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(bytes_, other.bytes_);
  }

  friend bool operator==(const LargeVector& a, const LargeVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void Reallocate(size_t n) {
    const size_t bytes = large_vector_internal::Rounded(n * sizeof(T));
    void* p = large_vector_internal::Resize(data_, bytes_, size_ * sizeof(T), bytes);
    if (p == nullptr) large_vector_internal::OutOfMemory();
    data_ = static_cast<T*>(p);
    bytes_ = bytes;
    capacity_ = bytes / sizeof(T);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t bytes_ = 0;  // Of the storage (capacity_ · sizeof(T), rounded up).
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_LARGE_VECTOR_H_
