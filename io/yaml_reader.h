// io/yaml_reader.h: parsing YAML that someone else wrote, with bounded expansion.
//
// yaml-cpp shares an aliased node instead of copying it, so a "billion laughs" document (nine
// levels of nine aliases) parses into a few kilobytes, and then whatever walks it (a conversion to
// JSON, a re-emit, a recursive check) visits 9^9 nodes and runs out of memory. load_yaml first
// streams the document's events and refuses it when it uses more aliases than a hand-written
// file would, when its size with every alias expanded passes a bound, when it nests too deep, or
// when a document cannot get past its first token (yaml-cpp 0.7 would loop on it forever); only
// then does it build the node tree. Every reader of a user's YAML goes through here.
//
//   auto doc = io::load_yaml(text, "job.yaml");        // std::expected<YAML::Node, Error>
//   if (!doc) return std::unexpected(doc.error());     // "job.yaml:3: more than 100 aliases ..."
//   auto docs = io::load_all_yaml(text, "labels.yaml"); // multi-document files
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"

namespace hypertopo::io {

struct YamlLimits {
  // Aliases ("*name") per file: configs and Kubernetes objects use a handful at most.
  std::size_t max_aliases = 100;
  // Nodes (scalars, sequences, mappings) that aliases add when expanded, over all documents. A
  // plain document is bounded by its file's size; this bounds what aliases multiply it into.
  std::size_t max_alias_expansion = 1'000'000;
  // Nesting of sequences and mappings.
  std::size_t max_depth = 128;
};

// The first document of `text` (a Null node for an empty text). `name` (the file) starts every
// error: "<name>:<line>: <what>".
std::expected<YAML::Node, Error> load_yaml(std::string_view text, const std::string& name,
                                           YamlLimits limits = {});
// Every document of `text`.
std::expected<std::vector<YAML::Node>, Error> load_all_yaml(std::string_view text, const std::string& name,
                                                            YamlLimits limits = {});

}  // namespace hypertopo::io
