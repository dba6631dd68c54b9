// The extender verbs on request bodies as kube-scheduler sends them, answered as JSON text.
//
// kube-scheduler posts ExtenderArgs (k8s.io/kube-scheduler/extender/v1) for every pod, twice (filter,
// then prioritize), each carrying every candidate node's name: at 6,000 nodes that is ~100 KB in
// and, for filter, a failedNodes map of the same size out. Reading that into a JSON tree and
// writing the answer from another one costs an allocation per name each way, which is most of the
// call. Here the body is read with simdjson (the names stay views into the parser's buffer), only the small
// pod object becomes a tree, and the answer is written straight into one string. Anything but the plain shape
// (full `nodes` objects, a repeated key, trailing bytes, a body simdjson rejects) takes the tree path, whose
// answers and errors are the reference.
//
// The preemptVerb's ExtenderPreemptionArgs name every candidate node with its victims' UIDs (0.5 MB
// at 6,000 nodes) and the answer may keep them all: read the same way (names and UIDs are views into
// the parser's buffer) and written as io::json_text writes the tree, byte for byte.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

// Where one thread keeps its parser between calls. simdjson's DOM parser picks its kernel for the
// CPU at run time (the on-demand API would be fixed at build time to the portable one).
struct BodyReader {
  simdjson::dom::parser parser;
};

struct PlainArgs {
  json pod;
  std::vector<std::string_view> names;  // views into the reader's parser: valid until its next body
};

bool one_of(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (key == n) return true;
  }
  return false;
}

// The pod and the `nodenames` list of a plain ExtenderArgs body; nullopt for any other shape.
std::optional<PlainArgs> read_plain_args(BodyReader& reader, std::string_view body) {
  simdjson::dom::element doc;
  if (reader.parser.parse(body.data(), body.size()).get(doc)) return std::nullopt;
  simdjson::dom::object object;
  if (doc.get_object().get(object)) return std::nullopt;
  PlainArgs out;
  bool have_pod = false, have_names = false;
  for (auto [key, value] : object) {
    if (one_of(key, {"pod", "Pod"})) {
      if (have_pod || !value.is_object()) return std::nullopt;
      auto pod = io::parse_json(simdjson::minify(value), "ExtenderArgs.pod");
      if (!pod) return std::nullopt;
      out.pod = std::move(*pod);
      have_pod = true;
    } else if (one_of(key, {"nodenames", "NodeNames", "nodeNames"})) {
      simdjson::dom::array names;
      if (have_names || value.get_array().get(names)) return std::nullopt;
      out.names.reserve(names.size());
      for (auto element : names) {
        std::string_view name;
        if (element.get_string().get(name)) return std::nullopt;
        out.names.push_back(name);
      }
      have_names = true;
    } else if (one_of(key, {"nodes", "Nodes"})) {
      return std::nullopt;  // full Node objects: the tree path keeps and returns them
    }
  }
  if (!have_pod || !have_names) return std::nullopt;
  return out;
}

BodyReader& thread_reader() {
  thread_local BodyReader reader;
  return reader;
}

inline bool needs_escape(char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  // Node names never need escaping: copy them whole.
  bool plain = true;
  for (char c : text) plain &= !needs_escape(c);
  if (plain) {
    out += text;
    out.push_back('"');
    return;
  }
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xf]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// A score as decimal digits (0..kMaxExtenderPriority: one or two), with no string made per name.
void append_score(std::string& out, std::int64_t score) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, score);
  out.append(digits, ec == std::errc() ? end : digits);
}

// A field of a parsed object as a JSON tree holds it: the last value under `key` (a tree keeps the
// last of a repeated key).
std::optional<simdjson::dom::element> last_at(simdjson::dom::element obj, std::string_view key) {
  simdjson::dom::object object;
  if (obj.get_object().get(object)) return std::nullopt;
  std::optional<simdjson::dom::element> out;
  for (auto [k, v] : object) {
    if (k == key) out = v;
  }
  return out;
}

// object_fields.h's field(): the first of `names` present and not null.
std::optional<simdjson::dom::element> field_of(simdjson::dom::element obj,
                                               std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    auto v = last_at(obj, n);
    if (v && !v->is_null()) return v;
  }
  return std::nullopt;
}

// object_fields.h's str_at(): a string field, else "".
std::string_view string_at(simdjson::dom::element obj, std::string_view key) {
  auto v = last_at(obj, key);
  std::string_view out;
  if (!v || v->get_string().get(out)) return {};
  return out;
}

struct PlainPreemptArgs {
  json pod;
  std::vector<ExtenderService::OfferedVictims> offered;  // views into the reader's parser
};

// The pod and the victims maps of a plain ExtenderPreemptionArgs body, read as
// ExtenderService::preempt reads the tree; nullopt for any other shape.
std::optional<PlainPreemptArgs> read_plain_preempt_args(BodyReader& reader, std::string_view body) {
  if (io::json_depth(body) > io::kMaxJsonDepth) return std::nullopt;
  simdjson::dom::element doc;
  if (reader.parser.parse(body.data(), body.size()).get(doc)) return std::nullopt;
  simdjson::dom::object object;
  if (doc.get_object().get(object)) return std::nullopt;
  std::optional<simdjson::dom::element> pod, meta, full;
  for (auto [key, value] : object) {
    std::optional<simdjson::dom::element>* slot = nullptr;
    if (one_of(key, {"Pod", "pod"})) {
      slot = &pod;
    } else if (one_of(key, {"NodeNameToMetaVictims", "nodeNameToMetaVictims", "nodenametometavictims"})) {
      slot = &meta;
    } else if (one_of(key, {"NodeNameToVictims", "nodeNameToVictims", "nodenametovictims"})) {
      slot = &full;
    }
    if (!slot) continue;
    if (*slot || !value.is_object()) return std::nullopt;  // repeated, null, or the tree path's error
    *slot = value;
  }
  if (!pod) return std::nullopt;
  PlainPreemptArgs out;
  auto tree = io::parse_json(simdjson::minify(*pod), "ExtenderPreemptionArgs.Pod");
  if (!tree) return std::nullopt;
  out.pod = std::move(*tree);
  for (const auto& map : {meta, full}) {
    if (!map) continue;
    simdjson::dom::object nodes;
    if (map->get_object().get(nodes)) return std::nullopt;
    for (auto [node, victims] : nodes) {
      ExtenderService::OfferedVictims v{.node = node};
      if (victims.is_object()) {
        if (auto n = field_of(victims, {"NumPDBViolations", "numPDBViolations"})) {
          if (n->is_int64()) {
            v.pdb_violations = n->get_int64().value_unsafe();
          } else if (n->is_uint64()) {  // as a tree's get<std::int64_t>() converts it
            v.pdb_violations = static_cast<std::int64_t>(n->get_uint64().value_unsafe());
          }
        }
        simdjson::dom::array pods;
        if (auto listed = field_of(victims, {"Pods", "pods"}); listed && !listed->get_array().get(pods)) {
          for (auto p : pods) {
            // MetaPod{UID} or a whole v1.Pod.
            std::string_view uid = string_at(p, "UID");
            if (uid.empty()) uid = string_at(p, "uid");
            if (uid.empty()) {
              if (auto meta_of = last_at(p, "metadata")) uid = string_at(*meta_of, "uid");
            }
            if (!uid.empty()) v.uids.push_back(uid);
          }
        }
      }
      out.offered.push_back(std::move(v));
    }
  }
  return out;
}

// A string as io::json_text writes it: plain printable ASCII copied whole, anything else through
// the tree writer (its escapes, and U+FFFD for a byte that is not UTF-8).
void append_tree_string(std::string& out, std::string_view text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
    out.push_back('"');
    out += text;
    out.push_back('"');
    return;
  }
  out += io::json_text(json(std::string(text)));
}

// The tree path: the body parsed whole (depth-bounded), answered by the JSON verb.
std::expected<std::string, Error> tree_path(std::string_view body,
                                            std::expected<json, Error> (ExtenderService::*verb)(const json&),
                                            ExtenderService& service) {
  auto args = io::parse_json(body, "request body");
  if (!args) return std::unexpected(args.error());
  auto answer = (service.*verb)(*args);
  if (!answer) return std::unexpected(answer.error());
  return io::json_text(*answer);
}

}  // namespace

void ExtenderService::count_text_path() { count(&VerbCounters::text_path_calls); }

std::expected<std::string, Error> ExtenderService::filter_body(std::string_view body) {
  BodyReader& reader = thread_reader();
  auto args = read_plain_args(reader, body);
  if (!args) return tree_path(body, &ExtenderService::filter, *this);
  count_text_path();
  auto outcome = filter_names(args->pod, args->names);
  if (!outcome) return std::unexpected(outcome.error());
  std::string out;
  if (!outcome->error.empty()) {
    out = "{\"error\":";
    append_json_string(out, outcome->error);
    out += "}";
    return out;
  }
  // The keys in the order kube-scheduler sent the names: failedNodes is a map to it (Go's
  // map[string]string), so no order is owed, and a gang pod fails all but one of 6,000 names, whose
  // sort cost more than the rest of the answer. A name sent twice (kube-scheduler sends each node
  // once) is written twice with the same reason; a JSON decoder keeps one, as the tree path does.
  std::size_t bytes = 64;
  for (std::string_view n : args->names) bytes += n.size() + 4;
  out.reserve(bytes);
  out += "{\"error\":\"\",\"failedNodes\":{";
  bool first = true;
  std::vector<std::string> quoted_reasons;
  for (const std::string& r : outcome->reasons) {
    std::string q;
    append_json_string(q, r);
    quoted_reasons.push_back(std::move(q));
  }
  for (std::size_t i = 0; i < args->names.size(); ++i) {
    if (outcome->reason[i] < 0) continue;
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, args->names[i]);
    out.push_back(':');
    out += quoted_reasons[static_cast<std::size_t>(outcome->reason[i])];
  }
  out += "},\"nodenames\":[";
  first = true;
  for (std::size_t i = 0; i < args->names.size(); ++i) {
    if (outcome->reason[i] >= 0) continue;
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, args->names[i]);
  }
  out += "]}";
  return out;
}

std::expected<std::string, Error> ExtenderService::prioritize_body(std::string_view body) {
  BodyReader& reader = thread_reader();
  auto args = read_plain_args(reader, body);
  if (!args) return tree_path(body, &ExtenderService::prioritize, *this);
  count_text_path();
  auto scores = prioritize_names(args->pod, args->names);
  if (!scores) return std::unexpected(scores.error());
  std::string out;
  std::size_t bytes = 2;
  for (std::string_view n : args->names) bytes += n.size() + 24;
  out.reserve(bytes);
  out.push_back('[');
  for (std::size_t i = 0; i < args->names.size(); ++i) {
    if (i) out.push_back(',');
    out += "{\"host\":";
    append_json_string(out, args->names[i]);
    out += ",\"score\":";
    append_score(out, (*scores)[i]);
    out.push_back('}');
  }
  out.push_back(']');
  return out;
}

std::expected<std::string, Error> ExtenderService::preempt_body(std::string_view body) {
  auto args = read_plain_preempt_args(thread_reader(), body);
  if (!args) {
    auto tree = io::parse_json(body, "ExtenderPreemptionArgs");
    if (!tree) return std::unexpected(tree.error());
    auto answer = preempt(*tree);
    if (!answer) return std::unexpected(answer.error());
    return io::json_text(*answer);
  }
  auto kept = preempt_pod(args->pod, std::move(args->offered));
  if (!kept) return std::unexpected(kept.error());
  // As io::json_text writes ExtenderPreemptionResult: nodes sorted, each victims object's keys too.
  std::size_t bytes = 32;
  for (const PreemptedNode& n : *kept) {
    bytes += n.node.size() + 48;
    for (const std::string& uid : n.uids) bytes += uid.size() + 12;
  }
  std::string out;
  out.reserve(bytes);
  out += "{\"NodeNameToMetaVictims\":{";
  for (std::size_t i = 0; i < kept->size(); ++i) {
    const PreemptedNode& n = (*kept)[i];
    if (i) out.push_back(',');
    append_tree_string(out, n.node);
    out += ":{\"NumPDBViolations\":";
    out += std::to_string(n.pdb_violations);
    out += ",\"Pods\":[";
    for (std::size_t j = 0; j < n.uids.size(); ++j) {
      if (j) out.push_back(',');
      out += "{\"UID\":";
      append_tree_string(out, n.uids[j]);
      out.push_back('}');
    }
    out += "]}";
  }
  out += "}}";
  return out;
}

}  // namespace hypertopo::scheduler
