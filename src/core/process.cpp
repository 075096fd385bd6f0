#include "core/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace rltune {

ProcessOutput run_process(const std::vector<std::string>& argv, const std::string& bin_dir, double timeout_s) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  const auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    close_all();
    return {-1, "", fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  }
  const std::string program = bin_dir.empty() ? argv[0] : bin_dir + "/" + argv[0];
  const pid_t pid = fork();
  if (pid < 0) {
    close_all();
    return {-1, "", fmt::format("cannot fork: {}", std::strerror(errno))};
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a time-out kills what it started too
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close_all();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args[0] = const_cast<char*>(program.c_str());
    args.push_back(nullptr);
    if (bin_dir.empty()) execvp(program.c_str(), args.data());
    else execv(program.c_str(), args.data());
    const std::string why = fmt::format("cannot run {}: {}\n", program, std::strerror(errno));
    [[maybe_unused]] const auto written = write(2, why.data(), why.size());
    _exit(127);
  }
  close(out_pipe[1]), close(err_pipe[1]);
  ProcessOutput o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool timed_out = false;
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[k].fd, buffer, sizeof buffer);
      if (n > 0) (k == 0 ? o.out : o.err).append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) close(fds[k].fd), fds[k].fd = -1, --open_fds;
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (timed_out) kill(-pid, SIGKILL), kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    o.status = -1;
    o.err = fmt::format("timed out after {} s", timeout_s);
  } else {
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return o;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace rltune
