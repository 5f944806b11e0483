#include "formats/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace meshsim::formats {

namespace {

// Fixed storage: the handler may only touch memory that never moves and call
// async-signal-safe functions (unlink, write, _exit).
constexpr int kPathBytes = 4096;
struct Slot {
  std::atomic<bool> used{false};
  char path[kPathBytes];
};
Slot g_slots[TempFile::kMaxTempFiles];

extern "C" void RemoveTempFilesAndExit(int) {
  for (Slot& s : g_slots) {
    if (s.used.load()) ::unlink(s.path);
  }
  static const char kMessage[] = "meshsim: interrupted; no output file written\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  ::_exit(1);
}

}  // namespace

TempFile::TempFile(std::string path) : path_(std::move(path)) {
  if (path_.size() >= kPathBytes) return;
  for (int i = 0; i < kMaxTempFiles; ++i) {
    Slot& s = g_slots[i];
    if (s.used.load()) continue;
    std::memcpy(s.path, path_.c_str(), path_.size() + 1);
    s.used.store(true);
    slot_ = i;
    return;
  }
}

TempFile::~TempFile() {
  if (slot_ >= 0) g_slots[slot_].used.store(false);
}

absl::StatusOr<StagedOutput> StagedOutput::Create(const std::string& path) {
  auto registration =
      std::make_unique<TempFile>(absl::StrCat(path, ".part.", static_cast<int64_t>(::getpid())));
  FILE* file = std::fopen(registration->path().c_str(), "wb");
  if (file == nullptr || std::fclose(file) != 0) {
    const int error = errno;
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path, "': ", std::strerror(error)));
  }
  return StagedOutput(path, std::move(registration));
}

StagedOutput::~StagedOutput() {
  if (registration_) std::remove(registration_->path().c_str());
}

absl::Status StagedOutput::Commit() {
  if (!registration_) return absl::FailedPreconditionError("staged output already committed");
  const std::string staging = registration_->path();
  if (std::rename(staging.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    std::remove(staging.c_str());
    registration_.reset();
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path_, "': ", std::strerror(error)));
  }
  registration_.reset();
  return absl::OkStatus();
}

void InstallInterruptCleanup() {
  struct sigaction sa {};
  sa.sa_handler = RemoveTempFilesAndExit;
  sigemptyset(&sa.sa_mask);
  for (int signal : kInterruptSignals) sigaction(signal, &sa, nullptr);
}

}  // namespace meshsim::formats
