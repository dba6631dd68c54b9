// io/yaml_json.h: a YAML node as the JSON value a Kubernetes client would read from it.
//
// Plain scalars resolve as YAML 1.2's core schema does (what kubectl's YAML reading gives for the
// shapes we read): null, ~ and an empty value are null; true/false in three spellings are booleans;
// integers (beyond int64 as unsigned) and finite decimals are numbers; anything else, and every
// quoted or !!str-tagged scalar, is a string. Mapping keys are their text. Every reader of YAML that
// hands it on as JSON (NodeReports, configs, kubectl objects) goes through here, so one file reads
// the same in every command.
//
//   auto doc = io::load_yaml(text, "job.yaml");      // bounded parse (yaml_reader.h)
//   nlohmann::json j = io::yaml_to_json(*doc);        // {"replicas": 4, "name": "a"}
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace hypertopo::io {

nlohmann::json yaml_to_json(const YAML::Node& node);

}  // namespace hypertopo::io
