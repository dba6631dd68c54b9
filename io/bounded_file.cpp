#include "io/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <memory>

namespace hypertopo::io {
namespace {

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::unexpected<Error> over_limit(const std::string& name, std::size_t limit) {
  return fail(ErrorCode::kInvalidArgument, name + ": larger than the " + describe_size(limit) + " limit");
}

// Opens a regular file of at most `max_bytes` for reading, without blocking on a FIFO; its size in
// `size`.
std::expected<void, Error> open_bounded(const std::filesystem::path& path, const std::string& name,
                                        std::size_t max_bytes, FileDescriptor& fd, std::size_t& size) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  fd.reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return fail(ErrorCode::kNotFound, name + ": cannot open: no such file");
    if (err == EACCES || err == EPERM)
      return fail(ErrorCode::kPermission, name + ": cannot open: permission denied");
    return fail(ErrorCode::kUnavailable, name + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(ErrorCode::kUnavailable, name + ": cannot stat: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument, name + ": is " + file_kind(st.st_mode) + ", not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return over_limit(name, max_bytes);
  // Regular files never block; clear the flag so that reads behave as usual on every filesystem.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<std::size_t>(st.st_size);
  return {};
}

}  // namespace

std::string describe_size(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::expected<std::string, Error> read_bounded_file(const std::filesystem::path& path,
                                                    std::size_t max_bytes) {
  const std::string name = path.string();
  FileDescriptor fd(-1);
  std::size_t file_size = 0;
  if (auto opened = open_bounded(path, name, max_bytes, fd, file_size); !opened)
    return std::unexpected(opened.error());
  std::string out;
  // Read straight into the string, with kReadAheadRoom spare past its end: no bounce buffer to copy
  // from, and a parser that reads ahead (simdjson) takes the text in place instead of a copy.
  out.reserve(file_size + kReadAheadRoom);
  char probe[65536];
  for (;;) {
    // sysfs and procfs report a size that is not the content's: once the size stat gave is read,
    // go on through `probe` until the end, bounded.
    const std::size_t spare = out.capacity() - out.size();
    const std::size_t room =
        spare > kReadAheadRoom ? std::min(spare - kReadAheadRoom, max_bytes + 1 - out.size()) : 0;
    ssize_t n = 0;
    if (room > 0) {
      out.resize_and_overwrite(out.size() + room, [&](char* data, std::size_t size) {
        const std::size_t at = size - room;
        n = ::read(fd.get(), data + at, room);
        return at + (n > 0 ? static_cast<std::size_t>(n) : 0);
      });
    } else {
      n = ::read(fd.get(), probe, sizeof probe);
      if (n > 0 && out.size() + static_cast<std::size_t>(n) > max_bytes) return over_limit(name, max_bytes);
      if (n > 0) out.append(probe, static_cast<std::size_t>(n));
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kUnavailable, name + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    if (out.size() > max_bytes) return over_limit(name, max_bytes);
  }
  return out;
}

std::expected<void, Error> read_bounded_file_pieces(const std::filesystem::path& path, std::size_t max_bytes,
                                                    std::size_t piece, const FilePieceReader& take,
                                                    std::size_t* size) {
  const std::string name = path.string();
  FileDescriptor fd(-1);
  std::size_t file_size = 0;
  if (auto opened = open_bounded(path, name, max_bytes, fd, file_size); !opened) return opened;
  if (size) *size = file_size;
  // Not cleared: read() writes what is handed on, and pages never written cost no memory.
  const std::size_t capacity = std::max<std::size_t>(piece, 1);
  const auto buffer = std::make_unique_for_overwrite<char[]>(capacity);
  std::size_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.get(), capacity);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kUnavailable, name + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) return {};
    total += static_cast<std::size_t>(n);
    if (total > max_bytes) return over_limit(name, max_bytes);
    if (auto ok = take(std::string_view(buffer.get(), static_cast<std::size_t>(n))); !ok) return ok;
  }
}

std::expected<std::string, Error> read_bounded_stream(std::istream& in, const std::string& name,
                                                      std::size_t max_bytes) {
  std::string out;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    if (out.size() + n > max_bytes) return over_limit(name, max_bytes);
    out.append(buffer, n);
  }
  if (in.bad()) return fail(ErrorCode::kUnavailable, name + ": read failed");
  return out;
}

}  // namespace hypertopo::io
