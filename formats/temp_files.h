// Temporary output files and the signals that would strand them.
//
// Every output is written to `<path>.tmp.<pid>` and renamed when complete. A SIGINT, SIGTERM or
// SIGHUP (the terminal closed) in between would leave the temporary file behind; this registry lets
// a signal handler remove it. `InstallInterruptCleanup` (called once by `meshsim`'s Main) installs
// handlers that remove every registered file, print one line and exit with status 1. `meshsim
// sweep` replaces them for its duration with its own, which stop the workers and clean up through
// the normal path.
//
// Example:
//   TempFile tmp(absl::StrCat(path, ".tmp.", getpid()));  // registered until destroyed
//   ... write tmp.path() ..., then rename it
#ifndef MESHSIM_FORMATS_TEMP_FILES_H_
#define MESHSIM_FORMATS_TEMP_FILES_H_

#include <signal.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace meshsim::formats {

// The signals that interrupt a run: Ctrl-C, kill, and the terminal hanging up.
inline constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Registers `path` for removal on kInterruptSignals for the lifetime of the object. At most
// kMaxTempFiles at a time (more are not registered). Paths longer than 4095 bytes are not
// registered. Thread-safe against the handler (not against other threads registering).
class TempFile {
 public:
  static constexpr int kMaxTempFiles = 8;
  explicit TempFile(std::string path);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;
};

// An output produced early and published late: `compare` writes its first run's trace when that
// run ends but publishes it only when every run has succeeded. Create() makes the staging file
// `<path>.part.<pid>` (which proves the destination's directory writable before any simulation),
// registered for removal on kInterruptSignals; the writer writes staging_path(); Commit() renames
// it to `path`. Destroyed uncommitted (an error, a later run failing), it removes the staging file,
// so `path` is left as it was. Movable, not copyable.
class StagedOutput {
 public:
  // InvalidArgument "cannot write '<path>': <reason>" when the staging file cannot be created.
  static absl::StatusOr<StagedOutput> Create(const std::string& path);
  StagedOutput(StagedOutput&&) noexcept = default;
  StagedOutput& operator=(StagedOutput&&) noexcept = default;
  ~StagedOutput();

  const std::string& staging_path() const { return registration_->path(); }
  // Renames the staging file to the destination. InvalidArgument naming the destination when
  // the rename fails (the staging file is then removed).
  absl::Status Commit();

 private:
  StagedOutput(std::string path, std::unique_ptr<TempFile> registration)
      : path_(std::move(path)), registration_(std::move(registration)) {}
  std::string path_;
  std::unique_ptr<TempFile> registration_;  // Null once committed or moved from.
};

// Installs the handlers of kInterruptSignals described above. Idempotent.
void InstallInterruptCleanup();

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_TEMP_FILES_H_
