#pragma once
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace rltune {

// Writes `text` to `path` atomically (temporary file, then rename), so a reader or a killed run never
// sees half a file. Throws InputError if it cannot.
// `sync`: on disk before it returns (the file, then its folder's entry), for a record that must survive
// a crash or a power loss (the Slurm advisor's state); outputs that a rerun rewrites do without.
void write_file(const std::string& path, const std::string& text, bool sync = false);
// The same for content streamed by `write`, so a large file is never held in memory whole.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write, bool sync = false);

// The whole content of the file at `path`; nullopt when it cannot be read (callers say why it matters).
// InputError past 1 GiB (a device such as /dev/zero never ends).
std::optional<std::string> read_file(const std::string& path);

// A digest of the file's bytes ("fnv1a64:" and 16 hex digits), to tell whether an input changed between
// runs (not a cryptographic hash); nullopt when it cannot be read.
std::optional<std::string> file_digest(const std::string& path);
// Each regular file's digest by path: what a resume compares, since a file can change under the same
// name (pipes and devices are left out: reading them would consume the input). Throws InputError
// naming a file that cannot be read.
std::map<std::string, std::string> file_digests(const std::set<std::string>& paths);

// While alive, holds a lock (flock) on the file `path`, made if missing: a second process that would
// write the same thing is refused, instead of interleaving its writes with this one's. The kernel
// releases it when the process ends, however it ends; a normal end also removes the file.
class FileLock {
 public:
  // InputError "`what`: another rltune process `busy` (it holds PATH); `advice`" when another process holds it.
  FileLock(std::string path, const std::string& what, const std::string& busy, const std::string& advice);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// A FileLock on the folder `dir` (dir/.lock), for commands that write their outputs there.
class FolderLock : public FileLock {
 public:
  FolderLock(const std::string& dir, const std::string& what);
};

}  // namespace rltune
