#include "text/user_pattern.h"

#include <re2/re2.h>

namespace hypertopo::text {

namespace {
// RE2's default budget (8 MiB) per compiled pattern; the DFA cache lives inside it, so a match
// never grows beyond it either.
constexpr std::int64_t kMaxPatternMemory = 8 << 20;
}  // namespace

std::expected<UserPattern, std::string> UserPattern::compile(std::string_view pattern,
                                                             PatternOptions options) {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_case_sensitive(!options.case_insensitive);
  o.set_max_mem(kMaxPatternMemory);
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), o);
  if (!re->ok()) return std::unexpected("not a valid RE2 regular expression: " + re->error());
  UserPattern p;
  p.re_ = std::move(re);
  p.pattern_ = std::string(pattern);
  return p;
}

bool UserPattern::matches_whole(std::string_view text) const {
  return RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

bool UserPattern::matches_part(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

std::optional<std::vector<std::string>> UserPattern::search(std::string_view text) const {
  const int n = 1 + re_->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> groups(static_cast<std::size_t>(n));
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, groups.data(),
                  n)) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  out.reserve(groups.size());
  for (const auto& g : groups)
    out.emplace_back(g.data() == nullptr ? std::string() : std::string(g.data(), g.size()));
  return out;
}

int UserPattern::group_count() const { return re_->NumberOfCapturingGroups(); }

std::expected<std::vector<UserPattern>, std::string> compile_patterns(
    const std::vector<std::string>& patterns, const std::string& what, PatternOptions options) {
  std::vector<UserPattern> out;
  out.reserve(patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    auto p = UserPattern::compile(patterns[i], options);
    if (!p) return std::unexpected(what + "[" + std::to_string(i) + "] '" + patterns[i] + "': " + p.error());
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace hypertopo::text
