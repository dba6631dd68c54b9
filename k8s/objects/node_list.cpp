#include "k8s/objects/node_list.h"

#include <fstream>
#include <sstream>

#include "io/json_writer.h"
#include "io/object_reader.h"

namespace hypertopo::k8s {
namespace {

using nlohmann::json;

void read_string_map(const json& obj, const char* key, std::map<std::string, std::string>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object()) return;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string())
      out[k] = v.get<std::string>();
    else
      out[k] = io::json_text(v);
  }
}

std::expected<NodeInfo, Error> parse_node(const json& item, const std::string& where) {
  if (!item.is_object()) return fail(ErrorCode::kParse, where + " is not an object");
  auto kind = item.value("kind", std::string("Node"));
  if (kind != "Node") return fail(ErrorCode::kParse, where + " has kind '" + kind + "', expected Node");
  NodeInfo node;
  auto meta = item.find("metadata");
  if (meta == item.end() || !meta->is_object() || !meta->contains("name") || !(*meta)["name"].is_string()) {
    return fail(ErrorCode::kParse, where + " has no metadata.name");
  }
  node.name = (*meta)["name"].get<std::string>();
  read_string_map(*meta, "labels", node.labels);
  read_string_map(*meta, "annotations", node.annotations);
  if (auto spec = item.find("spec"); spec != item.end() && spec->is_object()) {
    node.unschedulable = spec->value("unschedulable", false);
    if (auto taints = spec->find("taints"); taints != spec->end() && taints->is_array()) {
      for (const auto& t : *taints) {
        if (!t.is_object()) continue;
        node.taints.push_back(Taint{t.value("key", std::string()), t.value("value", std::string()),
                                    t.value("effect", std::string())});
      }
    }
  }
  if (auto status = item.find("status"); status != item.end() && status->is_object()) {
    read_string_map(*status, "allocatable", node.allocatable);
    read_string_map(*status, "capacity", node.capacity);
    if (auto conds = status->find("conditions"); conds != status->end() && conds->is_array()) {
      for (const auto& c : *conds) {
        if (c.is_object() && c.value("type", std::string()) == "Ready") {
          node.ready = c.value("status", std::string()) == "True";
        }
      }
    }
  }
  return node;
}

}  // namespace

const NodeInfo* NodeList::find(const std::string& name) const {
  for (const auto& n : items) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

std::expected<NodeList, Error> parse_node_list(const json& doc) {
  if (!doc.is_object()) return fail(ErrorCode::kParse, "expected a NodeList object");
  NodeList list;
  if (doc.value("kind", std::string()) == "Node") {
    auto node = parse_node(doc, "items[0]");
    if (!node) return std::unexpected(node.error());
    list.items.push_back(std::move(*node));
    return list;
  }
  auto items = doc.find("items");
  if (items == doc.end() || !items->is_array()) {
    return fail(ErrorCode::kParse, "expected a NodeList with an 'items' array (kubectl get nodes -o json)");
  }
  list.items.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto node = parse_node((*items)[i], "items[" + std::to_string(i) + "]");
    if (!node) return std::unexpected(node.error());
    list.items.push_back(std::move(*node));
  }
  return list;
}

std::expected<NodeList, Error> read_node_list_file(const std::filesystem::path& path,
                                                   io::ObjectLedger* ledger) {
  auto file = io::read_objects(path);
  if (!file) return std::unexpected(file.error());
  const std::string name = path.string();
  // Items without a kind are Nodes, as in a NodeList.
  std::vector<const io::FileObject*> nodes;
  for (const auto& o : file->objects) {
    if (o.kind == "Node" || o.kind.empty()) nodes.push_back(&o);
  }
  NodeList list;
  if (file->documents.size() <= 1 && (nodes.empty() || nodes.size() == file->objects.size())) {
    auto whole = parse_node_list(file->documents.empty() ? json() : file->documents.front());
    if (!whole) return std::unexpected(whole.error().context(name));
    list = std::move(*whole);
  } else if (nodes.empty()) {
    return fail(ErrorCode::kParse, name + ": no Node among its " + std::to_string(file->documents.size()) +
                                       " documents (it holds " + file->kinds_summary() + ")");
  } else {
    for (const auto* o : nodes) {
      auto node = parse_node(*o->object, file->where(o->origin));
      if (!node) return std::unexpected(node.error().context(name));
      list.items.push_back(std::move(*node));
    }
  }
  if (ledger) ledger->record(*file, {"Node", ""});
  return list;
}

}  // namespace hypertopo::k8s
