// io/durable_file.h: replacing a file we own so that, whatever fails, it holds either its old
// contents or all of the new ones, and setting aside a file of ours that no longer reads.
//
// write_file_durably writes to a fresh temporary file in the target's directory, created by mkstemp
// (O_CREAT | O_EXCL: it never opens, follows or truncates something planted there, such as a
// symlink to another file), mode 0600, checks every write, fsyncs and closes it, renames it over the
// target and fsyncs the directory. On any failure (a full disk, a file size limit, a read-only
// directory) the temporary file is removed, the target is untouched, and the error names the target.
//
// set_aside renames a file that does not read (a state file cut short by a crash of the disk, a hand
// edit) to "<name>.corrupt-<UTC time>" in the same directory, so that the program can start without
// it and an admin can still look at it.
//
//   if (auto ok = io::write_file_durably("/var/lib/hypertopo/state.json", text); !ok) ... // count, log
//   auto moved = io::set_aside(path);   // "/var/lib/hypertopo/state.json.corrupt-20260127T120000Z"
#pragma once

#include <expected>
#include <filesystem>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::io {

std::expected<void, Error> write_file_durably(const std::filesystem::path& path, std::string_view contents);

// The new path of the file; a file of that name already there (two in one second) gets a counter.
std::expected<std::filesystem::path, Error> set_aside(const std::filesystem::path& path);

}  // namespace hypertopo::io
