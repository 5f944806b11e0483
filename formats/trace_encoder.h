// Internal to sim/: the interface between the trace exporter (sim/chrome_trace.cc), which decides
// what a trace shows — processes, threads and lanes, slices, arrows, counter tracks, run facts —
// and the encoders that write it in one file format: Trace Event JSON (chrome_trace.cc) and
// Perfetto's protobuf trace (perfetto_trace.cc). Both formats get the same calls, so they show
// the same tracks, slices, arrows and counters.
//
// Call order: Process* Thread* CounterTrack* Slice* Flow* Counter* Finish. Slices come grouped by
// thread (ascending thread index) and, within a thread, by start ascending, end descending, op
// rows before phase rows: an order in which they nest. All times are picoseconds as written
// (already rounded to the trace's resolution).
#ifndef MESHSIM_FORMATS_TRACE_ENCODER_H_
#define MESHSIM_FORMATS_TRACE_ENCODER_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/timeline.h"

namespace meshsim::formats {

// A flow (dependency arrow) attached to a slice: its id (1, 2, ...) and whether the slice is the
// arrow's source (else its destination).
struct SliceFlow {
  int64_t id;
  bool source;
};

struct TraceSlice {
  const core::TimelineRow* row;
  int64_t pid, tid;
  int64_t start_ps, end_ps;
  std::string_view label;            // The op's label; phase rows add " · <phase>".
  std::span<const SliceFlow> flows;  // Arrows starting or ending at this slice.
};

struct TraceFlow {
  int64_t id;
  int64_t from_pid, from_tid, from_ps;  // A point 1 ns inside the end of the source slice.
  int64_t to_pid, to_tid, to_ps;        // A point 1 ns inside the start of the destination.
  int64_t from_op, to_op;
};

class TraceEncoder {
 public:
  virtual ~TraceEncoder() = default;

  virtual void Process(int64_t pid, const std::string& name, int64_t sort_index) = 0;
  // Thread `tid` of process `pid`, at position `sort_index` among all threads.
  virtual void Thread(int64_t pid, int64_t tid, const std::string& name, int64_t sort_index) = 0;
  // A counter track `track` (a small id unique among tids and other counter tracks) in process
  // `pid`, shown as `name` + `suffix` ("chip0.hbm" + " GB/s"); utilization tracks have no suffix.
  virtual void CounterTrack(int64_t track, int64_t pid, const std::string& name,
                            const char* suffix) = 0;
  virtual void Slice(const TraceSlice& slice) = 0;
  virtual void Flow(const TraceFlow& flow) = 0;
  // One value of counter track `track`; `key` is "util %" or "GB/s".
  virtual void Counter(int64_t track, int64_t pid, const std::string& name, const char* suffix,
                       const char* key, int64_t ps, double value) = 0;
  // Run-level facts (key, value); `spare_track` is an id no other track uses.
  virtual void Finish(const std::vector<std::pair<std::string, std::string>>& facts,
                      int64_t spare_track) = 0;

  // Writes out what is buffered. False after any I/O error (then error() is its errno).
  virtual bool Flush() = 0;
  virtual bool ok() const = 0;
  virtual int error() const = 0;
};

// A 1 MiB buffer in front of a FILE*, shared by the encoders' writers: they append into
// buf_[len_ ..], Ensure room first, and Flush; after the first I/O error nothing more is written
// and error() is its errno.
class BufferedFile {
 public:
  static constexpr size_t kBufferSize = size_t{1} << 20;

  explicit BufferedFile(FILE* file) : file_(file), buf_(new char[kBufferSize]) {}

  // Writes the buffer out. Returns false after any I/O error.
  bool Flush() {
    if (len_ > 0) WriteOut(buf_.get(), len_);
    len_ = 0;
    return ok();
  }
  bool ok() const { return error_ == 0; }
  int error() const { return error_; }

 protected:
  // Makes room for n more bytes (n ≤ kBufferSize).
  void Ensure(size_t n) {
    if (kBufferSize - len_ < n) Flush();
  }
  // Appends n bytes; what does not fit in an empty buffer goes straight to the file.
  void Append(const void* data, size_t n) {
    if (n > kBufferSize - len_) {
      Flush();
      if (n > kBufferSize) {
        WriteOut(data, n);
        return;
      }
    }
    std::memcpy(buf_.get() + len_, data, n);
    len_ += n;
  }
  void WriteOut(const void* data, size_t n) {
    if (error_ != 0) return;
    if (std::fwrite(data, 1, n, file_) != n) error_ = errno != 0 ? errno : EIO;
  }

  FILE* file_;
  std::unique_ptr<char[]> buf_;
  size_t len_ = 0;
  int error_ = 0;
};

// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD (as the JSON writer does).
std::string ToValidUtf8(std::string_view s);

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_TRACE_ENCODER_H_
