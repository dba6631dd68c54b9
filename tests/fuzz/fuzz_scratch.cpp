// Scratch files for targets whose parser takes a path (see fuzz_target.h).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "tests/fuzz/fuzz_target.h"

namespace hypertopo::fuzzing {

std::filesystem::path scratch_file(const std::string& stem, std::string_view bytes) {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "hypertopo-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(pattern);
  }();
  const auto path = dir / stem;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + path.string());
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

}  // namespace hypertopo::fuzzing
