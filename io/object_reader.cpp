#include "io/object_reader.h"

#include <yaml-cpp/yaml.h>

#include "io/bounded_file.h"
#include "io/json_fields.h"
#include "io/json_reader.h"
#include "io/yaml_json.h"
#include "io/yaml_reader.h"

namespace hypertopo::io {
namespace {

using nlohmann::json;

std::string kind_of(const json& obj) { return str_at(obj, "kind"); }

// A list's items inherit its item kind when they carry none, as the API server's typed lists say it
// once for all of them ("NodeList": Nodes). The generic "List" says nothing.
std::string item_kind_of(const std::string& list_kind) {
  if (list_kind.size() > 4 && list_kind.ends_with("List")) return list_kind.substr(0, list_kind.size() - 4);
  return "";
}

bool is_list(const json& doc) {
  if (doc.is_array()) return true;
  if (!doc.is_object()) return false;
  auto items = doc.find("items");
  if (items == doc.end() || !items->is_array()) return false;
  // Only a List has items at its top: an object of another kind keeps its own (none we read do).
  const std::string kind = kind_of(doc);
  return kind.empty() || kind.ends_with("List");
}

void flatten(ObjectFile& file, std::size_t index) {
  const json& doc = file.documents[index];
  if (!is_list(doc)) {
    file.objects.push_back({&doc, kind_of(doc), {index, std::nullopt}});
    return;
  }
  const json& items = doc.is_array() ? doc : doc["items"];
  const std::string inherited = doc.is_array() ? std::string() : item_kind_of(kind_of(doc));
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string kind = kind_of(items[i]);
    if (kind.empty() && items[i].is_object() && !items[i].contains("kind")) kind = inherited;
    file.objects.push_back({&items[i], std::move(kind), {index, i}});
  }
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

bool looks_like_json(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

std::string ObjectFile::where(const ObjectOrigin& origin) const {
  std::string out;
  if (documents.size() > 1) {
    const std::size_t number =
        origin.document < document_numbers.size() ? document_numbers[origin.document] : origin.document;
    out = "document " + std::to_string(number + 1);
  }
  if (origin.item) out += (out.empty() ? "" : " ") + ("items[" + std::to_string(*origin.item) + "]");
  return out.empty() ? "document 1" : out;
}

std::string ObjectFile::kinds_summary() const {
  std::map<std::string, std::size_t> counts;
  for (const auto& o : objects) ++counts[o.kind.empty() ? "(no kind)" : o.kind];
  std::string out;
  for (const auto& [kind, n] : counts) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  return out.empty() ? "nothing" : out;
}

std::expected<ObjectFile, Error> parse_objects(std::string_view text, const std::string& name) {
  ObjectFile file;
  file.name = name;
  if (looks_like_json(text)) {
    auto doc = parse_json(text, name);
    if (!doc) return std::unexpected(doc.error());
    file.documents.push_back(std::move(*doc));
    file.document_numbers.push_back(0);
  } else {
    auto docs = load_all_yaml(text, name);
    if (!docs) return std::unexpected(docs.error());
    for (std::size_t d = 0; d < docs->size(); ++d) {
      json doc;
      try {
        doc = yaml_to_json((*docs)[d]);
      } catch (const YAML::Exception& e) {
        return fail(ErrorCode::kParse, name + ": not valid YAML: " + e.msg);
      }
      if (doc.is_null()) continue;  // a comment alone, or `---` with nothing under it
      file.documents.push_back(std::move(doc));
      file.document_numbers.push_back(d);
    }
  }
  // Objects point into documents: the vector is complete before any is taken.
  for (std::size_t d = 0; d < file.documents.size(); ++d) {
    const json& doc = file.documents[d];
    if (file.documents.size() > 1 && !doc.is_object() && !doc.is_array()) {
      return fail(ErrorCode::kParse, name + ": document " + std::to_string(file.document_numbers[d] + 1) +
                                         " is not an object (a Kubernetes object or a List), but " +
                                         doc.type_name());
    }
    flatten(file, d);
  }
  return file;
}

std::expected<ObjectFile, Error> read_objects(const std::filesystem::path& path) {
  auto text = read_bounded_file(path, kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  return parse_objects(*text, path.string());
}

void ObjectLedger::record(const ObjectFile& file, std::initializer_list<std::string_view> kinds) {
  std::vector<std::string> list;
  for (auto k : kinds) list.emplace_back(k);
  record(file, list);
}

void ObjectLedger::record(const ObjectFile& file, const std::vector<std::string>& kinds) {
  PerFile& per = files_[file.name];
  for (const auto& k : kinds) per.taken.insert(k);
  for (const auto& o : file.objects) {
    if (per.taken.contains(o.kind)) continue;
    const std::pair key{o.origin.document, o.origin.item ? *o.origin.item + 1 : 0};
    per.left.try_emplace(key, o.kind, Left{*o.object, file.where(o.origin)});
  }
}

void ObjectLedger::record_all(const std::string& file, std::string_view kind) {
  files_[file].taken.insert(std::string(kind));
}

std::vector<json> ObjectLedger::take(const std::string& file, std::string_view kind) {
  std::vector<json> out;
  auto it = files_.find(file);
  if (it == files_.end()) return out;
  it->second.taken.insert(std::string(kind));
  for (const auto& [key, left] : it->second.left) {
    if (left.first == kind) out.push_back(left.second.object);
  }
  return out;
}

std::vector<std::string> ObjectLedger::warnings() const {
  std::vector<std::string> out;
  for (const auto& [name, per] : files_) {
    std::map<std::string, std::vector<std::string>> by_kind;  // kind -> where, in file order
    for (const auto& [key, left] : per.left) {
      if (!per.taken.contains(left.first)) by_kind[left.first].push_back(left.second.where);
    }
    for (const auto& [kind, wheres] : by_kind) {
      // "document 3, 7" when each is a whole document; else each place in full.
      bool whole = true;
      for (const auto& w : wheres)
        whole = whole && w.starts_with("document ") && w.find(' ', 9) == std::string::npos;
      std::string places;
      for (const auto& w : wheres)
        places += (places.empty() ? "" : ", ") + (whole && !places.empty() ? w.substr(9) : w);
      out.push_back(name + ": " + plural(wheres.size(), "object") + " of " +
                    (kind.empty() ? std::string("no kind") : "kind " + kind) + " ignored (" + places + ")");
    }
  }
  return out;
}

}  // namespace hypertopo::io
