// io/bounded_file.h: reading a whole file that someone else wrote, with a size cap.
//
// Every file hypertopo reads (captures, configs, GUID maps, node and pod lists, tokens, sysfs
// attributes) may be hostile or simply wrong: `/dev/zero` never ends, a FIFO blocks forever, a
// 20 GB file exhausts memory. read_bounded_file opens without blocking, refuses anything that is
// not a regular file, and refuses files over the cap; each error is one line naming the file.
//
//   auto text = io::read_bounded_file(path, io::kConfigFileLimit);   // std::expected<std::string, Error>
//   if (!text) return std::unexpected(text.error());                  // "x.yaml: 5 GiB, over the 4 MiB
//   limit" auto piped = io::read_bounded_stream(std::cin, "<stdin>", io::kDataFileLimit);
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::io {

// Configs, kubeconfigs, label and hierarchy files: hand-written, small.
inline constexpr std::size_t kConfigFileLimit = std::size_t{4} << 20;
// Tokens, passwords, CA bundles.
inline constexpr std::size_t kSecretFileLimit = std::size_t{1} << 20;
// Captures, node / pod / job lists, traces: large fabrics and clusters, still far below memory.
inline constexpr std::size_t kDataFileLimit = std::size_t{256} << 20;
// One sysfs attribute is at most a page.
inline constexpr std::size_t kSysfsAttributeLimit = 4096;

// What read_bounded_file leaves spare past the text of a regular file: a parser that reads up to 64
// bytes past the end (simdjson::SIMDJSON_PADDING) takes the string in place, as a padded_string_view
// of its capacity, instead of copying it.
inline constexpr std::size_t kReadAheadRoom = 64;

// The whole file, when it is a regular file of at most `max_bytes`. FIFOs, devices, sockets and
// directories are refused without blocking; a missing file is kNotFound. Its capacity holds
// kReadAheadRoom bytes past its size when the file is as long as stat says.
std::expected<std::string, Error> read_bounded_file(const std::filesystem::path& path, std::size_t max_bytes);

// The same file, checked as read_bounded_file checks it, handed to `take` in order in pieces of at
// most `piece` bytes read into one reused buffer, so a parser of lines never holds the whole text:
// `size` first receives the size stat gives. An error `take` returns stops the reading and is
// returned; a file that grows past `max_bytes` while read is refused as read_bounded_file refuses it.
//   io::read_bounded_file_pieces(path, io::kDataFileLimit, 1 << 20, [&](std::string_view piece) {
//     return parser.take(piece);   // std::expected<void, Error>
//   });
using FilePieceReader = std::function<std::expected<void, Error>(std::string_view piece)>;
std::expected<void, Error> read_bounded_file_pieces(const std::filesystem::path& path, std::size_t max_bytes,
                                                    std::size_t piece, const FilePieceReader& take,
                                                    std::size_t* size = nullptr);

// Everything `in` holds up to `max_bytes` (for "-", standard input); more is an error naming `name`.
std::expected<std::string, Error> read_bounded_stream(std::istream& in, const std::string& name,
                                                      std::size_t max_bytes);

// "4 MiB", "512 KiB", "17 bytes": sizes in messages.
std::string describe_size(std::size_t bytes);

}  // namespace hypertopo::io
