// io/object_reader.h: the one reader of files that hold Kubernetes objects.
//
// A user hands hypertopo what kubectl and hypertopo itself write: one object, a List (`kind: List`
// or a typed `NodeList`, `HyperNodeList`, ... with `items`), `kubectl get -o yaml|json` output,
// multi-document YAML (`---` and `...` markers, comments, empty documents, a leading `---`: what
// `discover -o yaml` and `kubectl apply -f` files are), a JSON array of objects, and any mix of
// kinds in one file. read_objects reads every document and returns its objects flattened (List
// items expanded), each with where it came from, so that a reader takes the kinds it reads and an
// error names the document at fault. As kubectl's resource.Builder, it reads every form one way.
//
// ObjectLedger keeps, for one command, what its readers took from each file and what they left: a
// kind that no reader of a file took is named in one warning, never dropped without a word.
//
//   auto file = io::read_objects("cluster.yaml");         // std::expected<ObjectFile, Error>
//   for (const auto& o : file->objects)
//     if (o.kind == "Node") use(*o.object, file->where(o.origin));   // "document 3", "items[4]"
//   io::ObjectLedger ledger;
//   ledger.record(*file, {"Node"});
//   for (const auto& w : ledger.warnings()) std::cerr << "warning: " << w << "\n";
//   // "cluster.yaml: 2 objects of kind ConfigMap ignored (document 3, 7)"
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "errors/error.h"

namespace hypertopo::io {

// A JSON file starts with '{' or '['; anything else is read as YAML.
bool looks_like_json(std::string_view text);

struct ObjectOrigin {
  std::size_t document = 0;         // 0-based, among the file's documents as YAML counts them
  std::optional<std::size_t> item;  // the index in that document's List items
};

struct FileObject {
  const nlohmann::json* object = nullptr;  // into ObjectFile::documents
  // Its own kind; an item without one takes its typed List's (a NodeList's items are Nodes), else "".
  std::string kind;
  ObjectOrigin origin;
};

struct ObjectFile {
  ObjectFile() = default;
  ObjectFile(const ObjectFile&) = delete;  // objects point into documents
  ObjectFile& operator=(const ObjectFile&) = delete;
  ObjectFile(ObjectFile&&) = default;
  ObjectFile& operator=(ObjectFile&&) = default;

  std::string name;  // the path as given, first in every message
  // The file's non-empty documents. A JSON file is one document; a YAML file's empty documents
  // (a comment alone, `---` twice) count in the numbering but are not kept.
  std::vector<nlohmann::json> documents;
  std::vector<std::size_t> document_numbers;  // 0-based position in the file of each kept document
  std::vector<FileObject> objects;

  // Where an object is, for a message: "items[4]" (a file of one document), "document 3" or
  // "document 3 items[4]" (1-based, as a reader counts the `---` separators).
  std::string where(const ObjectOrigin& origin) const;
  // The kinds present, counted: "2 ConfigMap, 1 HyperNode".
  std::string kinds_summary() const;
};

// Every document of `text`, its objects flattened. A document that is not an object or a list of
// objects is an error naming it; so is invalid YAML or JSON, or YAML past io::load_all_yaml's
// bounds (aliases, depth).
std::expected<ObjectFile, Error> parse_objects(std::string_view text, const std::string& name);
// The file, bounded by io::kDataFileLimit (bounded_file.h), read by parse_objects.
std::expected<ObjectFile, Error> read_objects(const std::filesystem::path& path);

// What the readers of one command took from each file (the kinds) and what they left (the objects,
// kept for another reader of the same file or for the warning).
class ObjectLedger {
 public:
  // A reader of `file` took the objects of `kinds` ("" for objects without a kind); the others are
  // kept until a reader takes their kind.
  void record(const ObjectFile& file, std::initializer_list<std::string_view> kinds);
  void record(const ObjectFile& file, const std::vector<std::string>& kinds);
  // A reader read all of `file` as `kind` (a whole list, on the fast path): nothing is left.
  void record_all(const std::string& file, std::string_view kind);
  // The objects of `kind` left in `file` (copies, in file order); the kind counts as taken.
  std::vector<nlohmann::json> take(const std::string& file, std::string_view kind);
  // One line per file and kind that no reader took:
  // "<file>: 2 objects of kind ConfigMap ignored (document 3, 7)".
  std::vector<std::string> warnings() const;
  // Milliseconds spent reading the files' bytes, apart from parsing them (`place --timings`).
  void add_read_ms(double ms) { read_ms_ += ms; }
  double read_ms() const { return read_ms_; }

 private:
  struct Left {
    nlohmann::json object;
    std::string where;
  };
  struct PerFile {
    std::set<std::string, std::less<>> taken;
    // (document, item + 1 or 0 for a whole document) -> (kind, object): file order
    std::map<std::pair<std::size_t, std::size_t>, std::pair<std::string, Left>> left;
  };
  std::map<std::string, PerFile> files_;
  double read_ms_ = 0;
};

}  // namespace hypertopo::io
