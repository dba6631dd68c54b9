// k8s/objects/node_list.h: Nodes as `kubectl get nodes -o json` prints them.
//
// Reads a v1 NodeList (or a v1 List of Nodes, or a single Node) into plain structs: name, labels,
// annotations, allocatable and capacity quantities as strings, taints, Ready and unschedulable.
// A file may also hold several YAML documents and other kinds (io/object_reader.h): its Nodes are
// read from every document, and the other objects left in the ledger for its warning.
//
//   io::ObjectLedger ledger;
//   auto nodes = k8s::read_node_list_file("nodes.yaml", &ledger);  // std::expected<NodeList, Error>
//   for (const auto& n : nodes->items) std::cout << n.name << "\n";
#pragma once

#include <expected>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "errors/error.h"

namespace hypertopo::io {
class ObjectLedger;
}  // namespace hypertopo::io

namespace hypertopo::k8s {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> allocatable;  // quantity strings as the API gives them
  std::map<std::string, std::string> capacity;
  std::vector<Taint> taints;
  bool ready = true;
  bool unschedulable = false;
};

struct NodeList {
  std::vector<NodeInfo> items;
  const NodeInfo* find(const std::string& name) const;
};

std::expected<NodeList, Error> parse_node_list(const nlohmann::json& doc);
std::expected<NodeList, Error> read_node_list_file(const std::filesystem::path& path,
                                                   io::ObjectLedger* ledger = nullptr);

}  // namespace hypertopo::k8s
