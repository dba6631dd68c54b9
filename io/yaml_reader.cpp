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
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

std::expected<std::vector<YAML::Node>, Error> load_all_yaml(std::string_view text, const std::string& name,
                                                            YamlLimits limits) {
  if (auto ok = check_expansion(text, name, limits); !ok) return std::unexpected(ok.error());
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, at(name, e.mark) + "not valid YAML: " + e.msg);
  }
}

}  // namespace hypertopo::io
