#include "io/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

namespace hypertopo::io {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// The descriptor and the temporary name, removed unless released.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!name.empty()) ::unlink(name.c_str());
  }
  int fd = -1;
  std::string name;  // empty once renamed
};

}  // namespace

std::expected<void, Error> write_file_durably(const std::filesystem::path& path, std::string_view contents) {
  const std::string where = path.string();
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string filename = path.filename().string();
  if (filename.empty()) return fail(ErrorCode::kInvalidArgument, where + ": not a file name");
  TempFile temp;
  std::string pattern = (dir / ("." + filename + ".XXXXXX")).string();
  // mkostemp opens with O_CREAT | O_EXCL (never through a planted link) and mode 0600.
  temp.fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (temp.fd < 0) {
    return fail(ErrorCode::kUnavailable,
                where + ": cannot create a temporary file in " + dir.string() + ": " + errno_text(errno));
  }
  temp.name = pattern;
  if (::fchmod(temp.fd, S_IRUSR | S_IWUSR) != 0) {
    return fail(ErrorCode::kUnavailable, where + ": cannot set mode 0600: " + errno_text(errno));
  }
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(temp.fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      return fail(ErrorCode::kUnavailable, where + ": writing " + std::to_string(contents.size()) +
                                               " bytes failed after " + std::to_string(written) + ": " +
                                               errno_text(err) + " (the old file is kept)");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(temp.fd) != 0) {
    return fail(ErrorCode::kUnavailable,
                where + ": fsync failed: " + errno_text(errno) + " (the old file is kept)");
  }
  const int fd = temp.fd;
  temp.fd = -1;
  if (::close(fd) != 0) {
    return fail(ErrorCode::kUnavailable,
                where + ": close failed: " + errno_text(errno) + " (the old file is kept)");
  }
  if (::rename(temp.name.c_str(), where.c_str()) != 0) {
    return fail(ErrorCode::kUnavailable, where + ": cannot rename " + temp.name +
                                             " over it: " + errno_text(errno) + " (the old file is kept)");
  }
  temp.name.clear();
  // The rename is durable once the directory is.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return fail(ErrorCode::kUnavailable, where + ": cannot open its directory: " + errno_text(errno));
  const int synced = ::fsync(dir_fd);
  const int err = errno;
  ::close(dir_fd);
  if (synced != 0)
    return fail(ErrorCode::kUnavailable, where + ": fsync of its directory failed: " + errno_text(err));
  return {};
}

std::expected<std::filesystem::path, Error> set_aside(const std::filesystem::path& path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path target = path;
    target += ".corrupt-" + std::string(stamp) + (attempt == 0 ? "" : "-" + std::to_string(attempt));
    // link + unlink instead of rename: never replaces a file already set aside.
    if (::link(path.c_str(), target.c_str()) == 0) {
      if (::unlink(path.c_str()) != 0) {
        const int err = errno;
        ::unlink(target.c_str());
        return fail(ErrorCode::kUnavailable, path.string() + ": cannot set it aside: " + errno_text(err));
      }
      return target;
    }
    if (errno != EEXIST) {
      // A file system without hard links: a plain rename, checked for a clash first.
      if (errno == EPERM || errno == EOPNOTSUPP) {
        std::error_code ec;
        if (std::filesystem::exists(target, ec)) continue;
        if (::rename(path.c_str(), target.c_str()) == 0) return target;
      }
      return fail(ErrorCode::kUnavailable,
                  path.string() + ": cannot set it aside as " + target.string() + ": " + errno_text(errno));
    }
  }
  return fail(ErrorCode::kUnavailable, path.string() + ": cannot set it aside: too many set-aside copies");
}

}  // namespace hypertopo::io
