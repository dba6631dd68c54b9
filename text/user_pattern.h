// text/user_pattern.h: regular expressions that come from users, matched in linear time.
//
// Host description patterns, exclusion lists, RoCE hierarchy rules and HyperNode `regexMatch` are
// written by admins and applied to descriptions a fabric reports. libstdc++'s std::regex recurses
// per character (a 40 KB description overflows the stack) and backtracks exponentially
// ('^((a+)+)$'). RE2 runs in time linear in the input with bounded memory, and its syntax is the
// one Go's regexp (and so Volcano's scheduler, for `regexMatch`) accepts.
//
//   auto p = UserPattern::compile("^(\\S+) mlx5_\\d+$");      // std::expected<UserPattern, std::string>
//   if (!p) return fail(ErrorCode::kParse, file + ": hostDescriptionPattern: " + p.error());
//   auto groups = p->search("dgx-01 mlx5_0");                // {"dgx-01 mlx5_0", "dgx-01"}
#pragma once

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace hypertopo::text {

struct PatternOptions {
  bool case_insensitive = false;
};

class UserPattern {
 public:
  // Fails with RE2's reason when `pattern` is not valid RE2 syntax or would need too much memory.
  static std::expected<UserPattern, std::string> compile(std::string_view pattern,
                                                         PatternOptions options = {});

  // The whole of `text` matches (std::regex_match).
  bool matches_whole(std::string_view text) const;
  // Some part of `text` matches (std::regex_search, Go's regexp.MatchString).
  bool matches_part(std::string_view text) const;
  // The leftmost match and its groups ([0] is the whole match; an unmatched group is empty), or
  // nullopt when nothing matches.
  std::optional<std::vector<std::string>> search(std::string_view text) const;
  // The number of capture groups.
  int group_count() const;
  const std::string& pattern() const { return pattern_; }

 private:
  UserPattern() = default;
  std::shared_ptr<const re2::RE2> re_;  // RE2 matching is const and thread-safe: copies share it
  std::string pattern_;
};

// Compiles each pattern; the error names the offending one as "<what>[i] '<pattern>': <reason>".
std::expected<std::vector<UserPattern>, std::string> compile_patterns(
    const std::vector<std::string>& patterns, const std::string& what, PatternOptions options = {});

}  // namespace hypertopo::text
