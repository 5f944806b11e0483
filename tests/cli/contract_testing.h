// Helpers for tests that run the real `meshsim` binary in a child process: exit status and
// signals, what it printed, and which files it left. (In-process tests cannot observe a crash,
// an exit hook or a signal handler.)
#ifndef MESHSIM_TESTS_SIM_CONTRACT_TESTING_H_
#define MESHSIM_TESTS_SIM_CONTRACT_TESTING_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace meshsim::sim::contract {

// How a child ended and what it printed.
struct Outcome {
  bool exited = false;  // False: killed by a signal (or by the timeout).
  int status = -1;      // Exit status when `exited`, else the signal number.
  bool timed_out = false;
  std::string out, err;  // At most the first `max_output` bytes of each.
  size_t out_bytes = 0;  // Total sizes printed.
};

inline std::string Slurp(const std::string& path, size_t max, size_t* total) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  *total = s.size();
  if (s.size() > max) s.resize(max);
  return s;
}

// Runs `binary args...` in `dir` with stdin from /dev/null. `file_size_limit` > 0 sets
// RLIMIT_FSIZE (with SIGXFSZ ignored: writes fail with EFBIG, as on a full disk). `while_running`
// (optional) is called every millisecond with the child's pid until it returns true or the child
// ends. The child is killed after `timeout`.
inline Outcome Spawn(const std::string& binary, const std::vector<std::string>& args,
                     const std::string& dir, std::chrono::milliseconds timeout,
                     long file_size_limit = 0,
                     const std::function<bool(pid_t)>& while_running = nullptr) {
  const std::string out_path = dir + "/.stdout", err_path = dir + "/.stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (file_size_limit > 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      struct rlimit limit = {static_cast<rlim_t>(file_size_limit),
                             static_cast<rlim_t>(file_size_limit)};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool watching = static_cast<bool>(while_running);
  int wstatus = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &wstatus, 0);
      o.timed_out = true;
      break;
    }
    if (watching && while_running(pid)) watching = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  o.exited = WIFEXITED(wstatus) && !o.timed_out;
  o.status = o.exited ? WEXITSTATUS(wstatus) : (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : -1);
  size_t err_bytes = 0;
  o.out = Slurp(out_path, 1 << 16, &o.out_bytes);
  o.err = Slurp(err_path, 1 << 16, &err_bytes);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return o;
}

// Names of the files in `dir` (not the helpers' own .stdout/.stderr).
inline std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != ".stdout" && name != ".stderr") names.push_back(name);
  }
  return names;
}

}  // namespace meshsim::sim::contract

#endif  // MESHSIM_TESTS_SIM_CONTRACT_TESTING_H_
