// tests/support/crd/crd_schema.h: checks an object the way the Kubernetes API server would before storing it.
//
// Every HyperNode hypertopo renders must be accepted by a real cluster. There is no API server here,
// so tests load the CRD's structural `openAPIV3Schema` (and Volcano's ValidatingAdmissionPolicy) and
// validate rendered objects against them: types, required, unknown fields, min/max, lengths, item
// counts, patterns, enums, formats, ObjectMeta rules, and the intent of every CEL rule, each written
// out by hand in C++ (there is no CEL interpreter). A CEL rule whose text is not one of the known
// rules makes loading fail, so a newer CRD cannot silently weaken the check.
//
//   auto crd = load_crd_schema(fixtures_dir() / "volcano/hypernodes-crd.yaml");
//   auto policy = load_admission_policy(fixtures_dir() /
//   "volcano/hypernodes-validating-admission-policy.yaml"); for (const auto& object :
//   render_hypernode_list(tree)["items"]) {
//     EXPECT_THAT(validate_against_crd(*crd, object), ::testing::IsEmpty());
//     EXPECT_THAT(validate_against_policy(*policy, object), ::testing::IsEmpty());
//   }
//   // an error reads "spec.members[0].selector: Only one of ExactMatch, RegexMatch, or LabelMatch can be
//   specified"
#pragma once

#include <expected>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hypertopo::testing {

struct SchemaNode;  // one parsed openAPIV3Schema node (defined in crd_schema.cpp)

class CrdSchema {
 public:
  const std::string& group() const { return group_; }
  const std::string& version() const { return version_; }
  const std::string& kind() const { return kind_; }
  bool namespaced() const { return namespaced_; }
  // "<path>: <rule id>" for every x-kubernetes-validations rule found in the schema (all of them
  // implemented, or loading would have failed).
  const std::vector<std::string>& cel_rules() const { return cel_rules_; }

 private:
  friend std::expected<CrdSchema, std::string> load_crd_schema(const std::filesystem::path& path,
                                                               const std::string& version);
  friend std::vector<std::string> validate_against_crd(const CrdSchema& schema, const nlohmann::json& object);

  std::string group_;
  std::string version_;
  std::string kind_;
  bool namespaced_ = false;
  std::vector<std::string> cel_rules_;
  std::shared_ptr<const SchemaNode> root_;
};

// Reads the CustomResourceDefinition in `path` (a single or multi-document YAML) and the schema of
// `version`. Fails with a message naming the file and the schema path on an unsupported keyword, a
// malformed value, or a CEL rule that is not implemented here.
std::expected<CrdSchema, std::string> load_crd_schema(const std::filesystem::path& path,
                                                      const std::string& version = "v1alpha1");

// Every problem found, one "<json path>: <message>" line each; empty when the API server would
// accept the object. Also checks apiVersion/kind against the CRD and ObjectMeta (name, labels,
// annotations), which the API server validates for every custom resource.
std::vector<std::string> validate_against_crd(const CrdSchema& schema, const nlohmann::json& object);

// Volcano's ValidatingAdmissionPolicy for HyperNodes: every validation expression is matched to a
// hand-written implementation of its intent (loading fails on an expression that is not known).
class AdmissionPolicy {
 public:
  const std::string& name() const { return name_; }
  // The ids of the validations found in the policy, in policy order.
  const std::vector<std::string>& rules() const { return rules_; }

 private:
  friend std::expected<AdmissionPolicy, std::string> load_admission_policy(const std::filesystem::path& path);
  friend std::vector<std::string> validate_against_policy(const AdmissionPolicy& policy,
                                                          const nlohmann::json& object);
  std::string name_;
  std::vector<std::string> rules_;
  std::vector<std::string> messages_;
};

std::expected<AdmissionPolicy, std::string> load_admission_policy(const std::filesystem::path& path);

// "<json path>: <policy message>" for each validation the object fails (an expression that would
// fail to evaluate, such as a member with no selector, denies the request: failurePolicy Fail).
std::vector<std::string> validate_against_policy(const AdmissionPolicy& policy, const nlohmann::json& object);

// Kubernetes name rules, exposed for tests of renderers.
bool is_qualified_name(const std::string& text);  // label keys, CEL format.qualifiedName()
bool is_label_value(const std::string& text);

}  // namespace hypertopo::testing
