#include "io/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <unordered_map>

namespace hypertopo::io {
namespace {

// Thrown out of the event stream to stop the parse at the first excess.
struct LimitExceeded {
  YAML::Mark mark;
  std::string what;
};

// Streams a document's events and keeps, for each anchor, the size of its node with aliases
// expanded; an alias then costs what its anchor costs, as it does to anyone who walks the tree.
class ExpansionCounter : public YAML::EventHandler {
 public:
  explicit ExpansionCounter(const YamlLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {
    anchors_.clear();
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > limits_.max_aliases) {
      throw LimitExceeded{mark, "more than " + std::to_string(limits_.max_aliases) +
                                    " aliases; refused (an alias bomb expands without bound)"};
    }
    // yaml-cpp refuses aliases to undefined anchors, so one not measured yet is still open: the
    // alias sits inside its own anchor, and the tree yaml-cpp builds would be a cycle.
    auto it = anchors_.find(anchor);
    if (it == anchors_.end())
      throw LimitExceeded{mark, "an alias inside the node it refers to (a cycle); refused"};
    expansion_ += it->second;
    if (expansion_ > limits_.max_alias_expansion) {
      throw LimitExceeded{mark, "more than " + std::to_string(limits_.max_alias_expansion) +
                                    " nodes with aliases expanded; refused (an alias bomb?)"};
    }
    add(it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::size_t size;  // with aliases expanded
  };

  void leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = 1;
    add(1);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.size() >= limits_.max_depth) {
      throw LimitExceeded{mark, "nested deeper than " + std::to_string(limits_.max_depth) + " levels"};
    }
    open_.push_back({anchor, 1});
  }
  void close() {
    Open done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) anchors_[done.anchor] = done.size;
    if (!open_.empty()) open_.back().size += done.size;
  }
  // A leaf adds one node to the node that holds it; an alias adds its anchor's whole size.
  void add(std::size_t size) {
    if (!open_.empty()) open_.back().size += size;
  }

  const YamlLimits& limits_;
  std::unordered_map<YAML::anchor_t, std::size_t> anchors_;
  std::vector<Open> open_;
  std::size_t aliases_ = 0;
  std::size_t expansion_ = 0;
};

std::string at(const std::string& name, const YAML::Mark& mark) {
  return mark.is_null() ? name + ": " : name + ":" + std::to_string(mark.line + 1) + ": ";
}

// yaml-cpp 0.7 (Debian 12's libyaml-cpp0.7) never returns from Parser::HandleNextDocument when a
// ',' stands where a block node or the end of one is expected: "," or ", a" at the start of a
// document, after a root node that is quoted ("\"a\",") or a flow collection ("[a],"), or after a
// tag or an anchor ("&x ," or "&x,"). It is not valid YAML (a plain scalar cannot begin with ',' and a
// quoted or flow node cannot continue with it), so such a ',' outside any flow collection is
// refused before yaml-cpp sees it. A ',' inside a plain scalar ("a, b" or "a ,") is left alone.
std::expected<void, Error> check_block_commas(std::string_view text, const std::string& name) {
  std::size_t line = 1;
  int flow = 0;               // depth of [ ] and { }
  bool at_line_start = true;  // only blanks so far on this line
  // About the last non-blank character on this line, outside quotes and comments:
  bool last_closed_node = false;     // it ended a quoted scalar or a flow collection at depth 0
  bool last_could_indicate = false;  // it is ':', or a '-' or '?' that began a token
  bool last_was_indicator = false;   // ... and a blank followed it; or a tag or anchor did
  bool blank_since_last = false;
  bool in_property = false;  // inside a tag (!x) or an anchor (&x) token
  auto token_start = [&](std::size_t i) {
    if (i == 0) return true;
    const char p = text[i - 1];
    return p == ' ' || p == '\t' || p == '\n' || p == '\r' ||
           (flow > 0 && (p == '[' || p == '{' || p == ','));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // YAML allows no C0 control character but tab and line breaks (and no DEL); yaml-cpp skips a
    // NUL, so "\0," is the same loop as ",".
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return fail(ErrorCode::kParse, name + ":" + std::to_string(line) +
                                         ": not valid YAML: a control character (byte " +
                                         std::to_string(static_cast<unsigned char>(c)) + ")");
    }
    if (c == '\n') {
      ++line;
      at_line_start = true;
      last_closed_node = last_was_indicator = blank_since_last = in_property = last_could_indicate = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      blank_since_last = true;
      if (in_property) {
        in_property = false;
        last_was_indicator = true;
      }
      if (last_could_indicate) last_was_indicator = true;
      continue;
    }
    if (c == '#' && token_start(i)) {  // a comment runs to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') &&
        (token_start(i) ||
         (i > 0 && (text[i - 1] == ':' || text[i - 1] == '[' || text[i - 1] == '{' || text[i - 1] == ',')))) {
      // A quoted scalar: skip to its end (it may span lines).
      std::size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') ++line;
        if (c == '"' && text[j] == '\\') {
          ++j;
          continue;
        }
        if (text[j] == c) {
          if (c == '\'' && j + 1 < text.size() && text[j + 1] == '\'') {
            ++j;
            continue;
          }
          break;
        }
      }
      i = j;
      at_line_start = false;
      last_closed_node = flow == 0;
      last_was_indicator = blank_since_last = in_property = last_could_indicate = false;
      continue;
    }
    if (c == ',' && flow == 0) {
      const bool refused =
          at_line_start || last_closed_node || in_property || (last_was_indicator && blank_since_last);
      if (refused) {
        return fail(ErrorCode::kParse, name + ":" + std::to_string(line) +
                                           ": not valid YAML: ',' outside a flow collection where a node "
                                           "is expected");
      }
    }
    const bool starts = token_start(i);
    if ((c == '[' || c == '{') && (flow > 0 || starts)) {
      ++flow;
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
      if (flow == 0) {
        at_line_start = false;
        last_closed_node = true;
        last_was_indicator = blank_since_last = in_property = last_could_indicate = false;
        continue;
      }
    }
    if ((c == '!' || c == '&') && starts && flow == 0) in_property = true;
    at_line_start = false;
    last_could_indicate = c == ':' || ((c == '-' || c == '?') && starts) ||
                          (c == '-' && i >= 2 && text.substr(i - 2, 3) == "---");  // a document start
    last_closed_node = false;
    last_was_indicator = false;
    blank_since_last = false;
  }
  return {};
}

std::expected<void, Error> check_expansion(std::string_view text, const std::string& name,
                                           const YamlLimits& limits) {
  std::istringstream in{std::string(text)};
  ExpansionCounter counter(limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const LimitExceeded& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + e.what);
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
  return {};
}

}  // namespace

std::expected<YAML::Node, Error> load_yaml(std::string_view text, const std::string& name,
                                           YamlLimits limits) {
  if (auto ok = check_block_commas(text, name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

std::expected<std::vector<YAML::Node>, Error> load_all_yaml(std::string_view text, const std::string& name,
                                                            YamlLimits limits) {
  if (auto ok = check_block_commas(text, name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

}  // namespace hypertopo::io
