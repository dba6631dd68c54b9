#include "io/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <optional>
#include <sstream>
#include <unordered_map>

namespace hypertopo::io {
namespace {

// Thrown out of the event stream to stop the parse at the first excess.
struct LimitExceeded {
  YAML::Mark mark;
  std::string what;
};

// What stands at `mark`, for an error: the character when it is a printable ASCII one.
std::string what_stands_at(std::string_view text, const YAML::Mark& mark) {
  if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) return "the end of the text";
  const char c = text[static_cast<std::size_t>(mark.pos)];
  if (c < 0x21 || c > 0x7e) return "a character";
  return std::string("'") + c + "'";
}

// Streams a document's events and keeps, for each anchor, the size of its node with aliases
// expanded; an alias then costs what its anchor costs, as it does to anyone who walks the tree.
//
// It also makes sure that every document moves the parse on. yaml-cpp 0.7 (Debian 12's
// libyaml-cpp0.7) reads a document as one node (SingleDocParser::HandleNode), and a token that
// cannot begin a node there (a ',' outside a flow collection: ",", "\"a\",", "[a],", "&x ,", "!t,";
// a '?' after a tagged block scalar: "! |\n?") is left where it is: the document comes out empty,
// Parser::HandleNextDocument says another one follows, and the next one starts on the same token,
// forever (YAML::LoadAll also gathers an empty document each time). So a document that starts
// where the one before it started is refused: that is exactly the loop, whatever token causes it,
// and it never happens to valid YAML, whose documents each consume at least one token.
class ExpansionCounter : public YAML::EventHandler {
 public:
  ExpansionCounter(std::string_view text, const YamlLimits& limits) : text_(text), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (mark.pos == previous_document_start_) {
      const std::string what = what_stands_at(text_, mark);
      throw LimitExceeded{
          mark, "not valid YAML: " +
                    (what == "','" ? std::string("',' outside a flow collection") : "unexpected " + what) +
                    " where a node is expected"};
    }
    previous_document_start_ = mark.pos;
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

  std::string_view text_;
  const YamlLimits& limits_;
  std::optional<int> previous_document_start_;  // its Mark::pos
  std::unordered_map<YAML::anchor_t, std::size_t> anchors_;
  std::vector<Open> open_;
  std::size_t aliases_ = 0;
  std::size_t expansion_ = 0;
};

std::string at(const std::string& name, const YAML::Mark& mark) {
  return mark.is_null() ? name + ": " : name + ":" + std::to_string(mark.line + 1) + ": ";
}

// YAML allows no C0 control character but tab and line breaks (and no DEL); yaml-cpp skips some of
// them (a NUL) as if they were not there, so an error that names the byte is clearer than what
// follows from reading past it.
std::expected<void, Error> check_characters(std::string_view text, const std::string& name) {
  std::size_t line = 1;
  for (const char c : text) {
    if (c == '\n') ++line;
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return fail(ErrorCode::kParse, name + ":" + std::to_string(line) +
                                         ": not valid YAML: a control character (byte " +
                                         std::to_string(static_cast<unsigned char>(c)) + ")");
    }
  }
  return {};
}

std::expected<void, Error> check_expansion(std::string_view text, const std::string& name,
                                           const YamlLimits& limits) {
  std::istringstream in{std::string(text)};
  ExpansionCounter counter(text, limits);
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
  if (auto ok = check_characters(text, name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

std::expected<std::vector<YAML::Node>, Error> load_all_yaml(std::string_view text, const std::string& name,
                                                            YamlLimits limits) {
  if (auto ok = check_characters(text, name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

}  // namespace hypertopo::io
