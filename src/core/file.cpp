#include "core/file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hash.h"

namespace rltune {

void write_file(const std::string& path, const std::string& text, bool sync) {
  write_file(path, [&](std::ostream& out) { out << text; }, sync);
}

namespace {

// Where the bytes of `path` go: through symbolic links to their target, so that a link stays a link.
std::filesystem::path written_path(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

}  // namespace

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write, bool sync) {
  // `error`: errno of the failing call, which says why (a full disk, no permission); 0 when unknown.
  // errno is cleared before each call it is read after, so that no earlier call's value is shown.
  const auto fail_on = [&](const char* what, int error) {
    const std::string why = error != 0 ? ": " + std::generic_category().message(error) : "";
    throw InputError(fmt::format("{}: cannot {} the output file{}", path, what, why));
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // through links
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) && !std::filesystem::is_directory(status)) {
    // A device or a pipe (/dev/stdout, a FIFO, >(command)): written to as it is, never replaced by a file.
    errno = 0;
    std::ofstream out(path, std::ios::binary);
    if (!out) fail_on("write", errno);
    write(out);
    errno = 0;
    out.close();
    if (!out) fail_on("write", errno);
    return;
  }
  const std::filesystem::path target = written_path(path);
  const std::string tmp = target.string() + ".tmp";
  const auto fail = [&](const char* what) {
    const int error = errno;
    std::remove(tmp.c_str());  // a full disk must not leave half a file behind
    fail_on(what, error);
  };
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("write");
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    errno = 0;
    out.close();  // flushes: a full disk that failed a write before fails this one too
    if (!out) fail("write");
  }
  // fsync on a descriptor of its own: the stream gives none.
  const auto synced = [](const std::string& file, int flags) {
    const int fd = ::open(file.c_str(), flags | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::fsync(fd) == 0;
    ::close(fd);
    return ok;
  };
  errno = 0;
  if (sync && !synced(tmp, O_RDONLY)) fail("write");
  errno = 0;
  if (std::rename(tmp.c_str(), target.c_str()) != 0) fail("replace");
  const std::string folder = target.has_parent_path() ? target.parent_path().string() : ".";
  errno = 0;
  if (sync && !synced(folder, O_RDONLY | O_DIRECTORY)) fail_on("sync the folder of", errno);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // Bounded: --cluster /dev/zero must stop, not fill the memory.
  constexpr std::size_t kMaxBytes = std::size_t{1} << 30;
  std::string text;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) throw InputError(fmt::format("{}: longer than 1 GiB, not a file rltune reads whole", path));
  }
  if (in.bad()) return std::nullopt;
  return text;
}

std::optional<std::string> file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Fnv1a h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.add(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  return fmt::format("fnv1a64:{:016x}", h.value());
}

std::map<std::string, std::string> file_digests(const std::set<std::string>& paths) {
  std::map<std::string, std::string> out;
  for (const std::string& f : paths) {
    if (std::error_code ec; !std::filesystem::is_regular_file(f, ec) && std::filesystem::exists(f, ec))
      continue;  // a pipe (/dev/stdin) read here would be empty for the run: it has no digest
    const std::optional<std::string> digest = file_digest(f);
    if (!digest) throw InputError(fmt::format("{}: cannot read", f));
    out[f] = *digest;
  }
  return out;
}

FileLock::FileLock(std::string path, const std::string& what, const std::string& busy, const std::string& advice)
    : path_(std::move(path)) {
  // A holder that ends removes the file while holding it; a process that had opened it just before
  // then locks a file no longer there, beside a newer holder of a new one. So a lock counts only on
  // the file the name still leads to; on another, open again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot open {}: {}", what, path_, std::generic_category().message(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK)
        throw InputError(fmt::format("{}: another rltune process {} (it holds {}); {}", what, busy, path_, advice));
      throw InputError(fmt::format("{}: cannot lock {}: {}", what, path_, std::generic_category().message(error)));
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      return;
    ::close(fd_);
    fd_ = -1;
  }
  throw InputError(fmt::format("{}: cannot lock {}: other processes keep replacing it", what, path_));
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still held: a process that opened it meanwhile finds it locked
  ::close(fd_);
}

FolderLock::FolderLock(const std::string& dir, const std::string& what)
    : FileLock((std::filesystem::path(dir) / ".lock").string(), what, "is writing there", "wait for it or choose another folder") {}

}  // namespace rltune
