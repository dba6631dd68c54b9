// The CRD oracle must accept what a cluster accepts and catch each rule a cluster enforces: every
// rule below has an object that breaks exactly it.
#include "tests/support/crd/crd_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

json hypernode_with_nodes() {
  return json::parse(R"({
    "apiVersion": "topology.volcano.sh/v1alpha1",
    "kind": "HyperNode",
    "metadata": {"name": "leaf-s0",
                 "labels": {"volcano.sh/network-topology-source": "label",
                            "app.kubernetes.io/managed-by": "hypertopo"}},
    "spec": {"tier": 1, "tierName": "volcano.sh/tor",
             "members": [{"type": "Node", "selector": {"exactMatch": {"name": "node-0"}}},
                         {"type": "Node", "selector": {"exactMatch": {"name": "node-1.example"}}}]}
  })");
}

json hypernode_with_every_selector_kind() {
  return json::parse(R"({
    "apiVersion": "topology.volcano.sh/v1alpha1",
    "kind": "HyperNode",
    "metadata": {"name": "spine-1"},
    "spec": {"tier": 2,
             "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-s0"}}},
                         {"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-(a|b)[0-9]{2}$"}}},
                         {"type": "Node", "selector": {"labelMatch": {
                            "matchLabels": {"rack": "r1"},
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}}}]},
    "status": {"nodeCount": 3,
               "conditions": [{"type": "Ready", "status": "True", "reason": "AllGood", "message": "",
                               "lastTransitionTime": "2025-01-02T03:04:05Z"}]}
  })");
}

class HyperNodeCrd : public ::testing::Test {
 protected:
  void SetUp() override {
    HT_REQUIRE_FIXTURE(crd_path, "volcano/hypernodes-crd.yaml");
    HT_REQUIRE_FIXTURE(policy_path, "volcano/hypernodes-validating-admission-policy.yaml");
    auto crd = load_crd_schema(crd_path);
    ASSERT_TRUE(crd.has_value()) << crd.error();
    crd_ = std::make_unique<CrdSchema>(std::move(*crd));
    auto policy = load_admission_policy(policy_path);
    ASSERT_TRUE(policy.has_value()) << policy.error();
    policy_ = std::make_unique<AdmissionPolicy>(std::move(*policy));
  }
  std::vector<std::string> crd_errors(const json& object) const {
    return validate_against_crd(*crd_, object);
  }
  std::vector<std::string> policy_errors(const json& object) const {
    return validate_against_policy(*policy_, object);
  }

  std::unique_ptr<CrdSchema> crd_;
  std::unique_ptr<AdmissionPolicy> policy_;
};

TEST_F(HyperNodeCrd, ReadsTheCrdAndEveryRule) {
  EXPECT_EQ(crd_->group(), "topology.volcano.sh");
  EXPECT_EQ(crd_->kind(), "HyperNode");
  EXPECT_FALSE(crd_->namespaced());
  EXPECT_EQ(crd_->cel_rules().size(), 2u);
  EXPECT_THAT(policy_->rules(),
              ElementsAre("members-present", "selector-has-a-kind", "selector-has-at-most-one-kind",
                          "exact-match-name-not-empty", "exact-match-name-qualified",
                          "regex-match-pattern-not-empty", "regex-match-parentheses-balanced",
                          "regex-match-brackets-balanced", "regex-match-braces-balanced"));
}

TEST_F(HyperNodeCrd, ValidObjectsPass) {
  EXPECT_THAT(crd_errors(hypernode_with_nodes()), IsEmpty());
  EXPECT_THAT(policy_errors(hypernode_with_nodes()), IsEmpty());
  EXPECT_THAT(crd_errors(hypernode_with_every_selector_kind()), IsEmpty());
  EXPECT_THAT(policy_errors(hypernode_with_every_selector_kind()), IsEmpty());
}

// --- openAPIV3Schema ---------------------------------------------------------------------------

TEST_F(HyperNodeCrd, TierIsRequired) {
  auto o = hypernode_with_nodes();
  o["spec"].erase("tier");
  EXPECT_THAT(crd_errors(o), ElementsAre("spec.tier: Required value"));
}

TEST_F(HyperNodeCrd, TierMustBeAnInteger) {
  auto o = hypernode_with_nodes();
  o["spec"]["tier"] = "1";
  EXPECT_THAT(crd_errors(o),
              ElementsAre(AllOf(StartsWith("spec.tier:"), HasSubstr("must be of type integer"))));
  o["spec"]["tier"] = 1.5;
  EXPECT_THAT(crd_errors(o), ElementsAre(HasSubstr("must be of type integer")));
}

TEST_F(HyperNodeCrd, TierHasAMinimum) {
  auto o = hypernode_with_nodes();
  o["spec"]["tier"] = -1;
  EXPECT_THAT(crd_errors(o),
              ElementsAre(AllOf(StartsWith("spec.tier:"), HasSubstr("greater than or equal to 0"))));
  o["spec"]["tier"] = 0;
  EXPECT_THAT(crd_errors(o), IsEmpty());
}

TEST_F(HyperNodeCrd, TierNameHasAMaxLength) {
  auto o = hypernode_with_nodes();
  o["spec"]["tierName"] = std::string(254, 'a');
  EXPECT_THAT(crd_errors(o), ElementsAre(AllOf(StartsWith("spec.tierName:"), HasSubstr("Too long"))));
  o["spec"]["tierName"] = std::string(253, 'a');
  EXPECT_THAT(crd_errors(o), IsEmpty());
}

TEST_F(HyperNodeCrd, MembersNeedAtLeastOneItem) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"] = json::array();
  EXPECT_THAT(crd_errors(o), ElementsAre(AllOf(StartsWith("spec.members:"), HasSubstr("at least 1 items"))));
}

TEST_F(HyperNodeCrd, MemberTypeIsRequiredAndEnumerated) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["type"] = "Switch";
  EXPECT_THAT(crd_errors(o), ElementsAre(AllOf(StartsWith("spec.members[0].type: Unsupported value"),
                                               HasSubstr("\"Node\", \"HyperNode\""))));
  o["spec"]["members"][0].erase("type");
  EXPECT_THAT(crd_errors(o), ElementsAre("spec.members[0].type: Required value"));
}

TEST_F(HyperNodeCrd, ExactMatchNameFollowsThePattern) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][1]["selector"]["exactMatch"]["name"] = "Node_1";
  EXPECT_THAT(crd_errors(o), ElementsAre(AllOf(StartsWith("spec.members[1].selector.exactMatch.name:"),
                                               HasSubstr("should match"))));
}

TEST_F(HyperNodeCrd, ExactMatchNameHasLengthLimits) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["exactMatch"]["name"] = std::string(254, 'a');
  EXPECT_THAT(crd_errors(o), ElementsAre(HasSubstr("Too long")));
  o["spec"]["members"][0]["selector"]["exactMatch"]["name"] = "";
  // Empty is both too short and not matching the pattern.
  EXPECT_THAT(crd_errors(o), ElementsAre(HasSubstr("at least 1 chars"), HasSubstr("should match")));
}

TEST_F(HyperNodeCrd, ExactMatchNeedsAName) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["exactMatch"] = json::object();
  EXPECT_THAT(crd_errors(o), ElementsAre("spec.members[0].selector.exactMatch.name: Required value"));
}

TEST_F(HyperNodeCrd, RegexMatchPatternIsRequiredAndNonEmpty) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "";
  EXPECT_THAT(crd_errors(o), ElementsAre(AllOf(StartsWith("spec.members[1].selector.regexMatch.pattern:"),
                                               HasSubstr("at least 1 chars"))));
  o["spec"]["members"][1]["selector"]["regexMatch"] = json::object();
  EXPECT_THAT(crd_errors(o), ElementsAre("spec.members[1].selector.regexMatch.pattern: Required value"));
}

TEST_F(HyperNodeCrd, MatchLabelsValuesAreStrings) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][2]["selector"]["labelMatch"]["matchLabels"]["rack"] = 1;
  EXPECT_THAT(crd_errors(o),
              ElementsAre(AllOf(StartsWith("spec.members[2].selector.labelMatch.matchLabels[rack]:"),
                                HasSubstr("must be of type string"))));
}

TEST_F(HyperNodeCrd, MatchExpressionsNeedKeyAndOperator) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][2]["selector"]["labelMatch"]["matchExpressions"][0].erase("operator");
  EXPECT_THAT(
      crd_errors(o),
      ElementsAre("spec.members[2].selector.labelMatch.matchExpressions[0].operator: Required value"));
}

TEST_F(HyperNodeCrd, UnknownFieldsAreRejected) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["exactMatch"]["namespace"] = "x";
  o["spec"]["weight"] = 3;
  o["extra"] = true;
  EXPECT_THAT(crd_errors(o),
              ElementsAre(HasSubstr("extra: unknown field"),
                          HasSubstr("spec.members[0].selector.exactMatch.namespace: unknown field"),
                          HasSubstr("spec.weight: unknown field")));
}

TEST_F(HyperNodeCrd, NullIsNotAValue) {
  auto o = hypernode_with_nodes();
  o["spec"]["tierName"] = nullptr;
  EXPECT_THAT(crd_errors(o), ElementsAre(HasSubstr("spec.tierName: Invalid value: \"null\"")));
}

TEST_F(HyperNodeCrd, StatusFieldsAreChecked) {
  auto o = hypernode_with_every_selector_kind();
  auto& c = o["status"]["conditions"][0];
  c["status"] = "Maybe";
  c["reason"] = "not ok";
  c["lastTransitionTime"] = "yesterday";
  o["status"]["nodeCount"] = -2;
  EXPECT_THAT(
      crd_errors(o),
      ElementsAre(
          StartsWith(
              "status.conditions[0].lastTransitionTime: Invalid value: \"yesterday\": must be in date-time"),
          StartsWith("status.conditions[0].reason: Invalid value: \"not ok\": should match"),
          StartsWith("status.conditions[0].status: Unsupported value"),
          StartsWith("status.nodeCount: Invalid value: -2")));
  c.erase("message");
  EXPECT_THAT(crd_errors(o), ::testing::Contains("status.conditions[0].message: Required value"));
}

// --- the CRD's CEL rules (x-kubernetes-validations on spec.members[].selector) ----------------------

TEST_F(HyperNodeCrd, CelSelectorNeedsAKind) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"] = json::object();
  EXPECT_THAT(crd_errors(o),
              ElementsAre("spec.members[0].selector: Invalid value: \"object\": Either ExactMatch or "
                          "RegexMatch or LabelMatch must be specified"));
}

TEST_F(HyperNodeCrd, CelSelectorHasAtMostOneKind) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["regexMatch"] = {{"pattern", "node-.*"}};
  EXPECT_THAT(crd_errors(o), ElementsAre("spec.members[0].selector: Invalid value: \"object\": Only one of "
                                         "ExactMatch, RegexMatch, or LabelMatch can be specified"));
}

// --- what the API server checks on every custom resource -----------------------------------------

TEST_F(HyperNodeCrd, ApiVersionAndKindMustMatchTheCrd) {
  auto o = hypernode_with_nodes();
  o["apiVersion"] = "topology.volcano.sh/v1";
  o["kind"] = "Hypernode";
  EXPECT_THAT(crd_errors(o),
              ElementsAre(StartsWith("apiVersion: Invalid value"), StartsWith("kind: Invalid value")));
  o.erase("kind");
  EXPECT_THAT(crd_errors(o), ::testing::Contains("kind: Required value"));
}

TEST_F(HyperNodeCrd, MetadataNameIsADns1123Subdomain) {
  auto o = hypernode_with_nodes();
  o["metadata"]["name"] = "Leaf_1";
  EXPECT_THAT(crd_errors(o), ElementsAre(StartsWith("metadata.name: Invalid value: \"Leaf_1\"")));
  o["metadata"]["name"] = std::string(254, 'a');
  EXPECT_THAT(crd_errors(o), ElementsAre(StartsWith("metadata.name: Invalid value")));
  o["metadata"].erase("name");
  EXPECT_THAT(crd_errors(o), ElementsAre(StartsWith("metadata.name: Required value")));
}

TEST_F(HyperNodeCrd, LabelKeysAndValuesFollowTheLabelRules) {
  auto o = hypernode_with_nodes();
  o["metadata"]["labels"]["bad key!"] = "x";
  o["metadata"]["labels"]["rack"] = std::string(64, 'a');
  o["metadata"]["labels"]["n"] = 3;
  o["metadata"]["unknown"] = 1;
  EXPECT_THAT(crd_errors(o), ElementsAre(StartsWith("metadata.unknown: unknown field"),
                                         StartsWith("metadata.labels[bad key!]: Invalid value: \"bad key!\""),
                                         StartsWith("metadata.labels[n]: Invalid value: \"integer\""),
                                         StartsWith("metadata.labels[rack]: Invalid value")));
}

TEST(KubernetesNames, QualifiedNamesAndLabelValues) {
  EXPECT_TRUE(is_qualified_name("volcano.sh/network-topology-source"));
  EXPECT_TRUE(is_qualified_name("volcano.sh_torA2-1"));
  EXPECT_TRUE(is_qualified_name(std::string(63, 'a')));
  EXPECT_FALSE(is_qualified_name(std::string(64, 'a')));
  EXPECT_FALSE(is_qualified_name("a/b/c"));
  EXPECT_FALSE(is_qualified_name("/b"));
  EXPECT_FALSE(is_qualified_name("Upper.Case/b"));
  EXPECT_FALSE(is_qualified_name("-a"));
  EXPECT_TRUE(is_label_value(""));
  EXPECT_TRUE(is_label_value("s0"));
  EXPECT_FALSE(is_label_value("a b"));
}

// --- Volcano's ValidatingAdmissionPolicy, one test per validation -----------------------------------

TEST_F(HyperNodeCrd, PolicyMembersPresent) {
  auto o = hypernode_with_nodes();
  o["spec"].erase("members");
  EXPECT_THAT(policy_errors(o), ElementsAre("spec.members: member must have at least one member"));
  o["spec"]["members"] = json::array();
  EXPECT_THAT(policy_errors(o), ElementsAre("spec.members: member must have at least one member"));
  // The CRD alone does not require members: only the policy catches their absence.
  o["spec"].erase("members");
  EXPECT_THAT(crd_errors(o), IsEmpty());
}

TEST_F(HyperNodeCrd, PolicySelectorHasAKind) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][1]["selector"] = json::object();
  EXPECT_THAT(policy_errors(o), ElementsAre("spec.members[1].selector: member selector must have one of "
                                            "exactMatch, regexMatch, or labelMatch"));
}

TEST_F(HyperNodeCrd, PolicySelectorHasAtMostOneKind) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["labelMatch"] = {{"matchLabels", {{"a", "b"}}}};
  EXPECT_THAT(policy_errors(o),
              ElementsAre("spec.members[0].selector: cannot specify more than one selector type "
                          "(exactMatch, regexMatch, labelMatch)"));
}

TEST_F(HyperNodeCrd, PolicyMemberWithoutSelectorIsDenied) {
  // The CRD accepts a member with no selector; every policy expression then fails to evaluate.
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0].erase("selector");
  EXPECT_THAT(crd_errors(o), IsEmpty());
  auto errors = policy_errors(o);
  EXPECT_EQ(errors.size(), 8u);
  for (const auto& e : errors)
    EXPECT_THAT(e, StartsWith("spec.members[0].selector (the expression cannot be evaluated"));
}

TEST_F(HyperNodeCrd, PolicyExactMatchNameNotEmpty) {
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["exactMatch"]["name"] = "";
  EXPECT_THAT(
      policy_errors(o),
      ElementsAre("spec.members[0].selector.exactMatch.name: member exactMatch name is required",
                  StartsWith("spec.members[0].selector.exactMatch.name: member exactMatch validate failed")));
}

TEST_F(HyperNodeCrd, PolicyExactMatchNameIsAQualifiedName) {
  // A HyperNode name of 64+ characters passes the CRD (maxLength 253) but not the policy: a qualified
  // name's name part is at most 63 characters.
  auto o = hypernode_with_nodes();
  o["spec"]["members"][0]["selector"]["exactMatch"]["name"] = std::string(64, 'a');
  EXPECT_THAT(crd_errors(o), IsEmpty());
  EXPECT_THAT(
      policy_errors(o),
      ElementsAre(StartsWith("spec.members[0].selector.exactMatch.name: member exactMatch validate failed")));
  o["spec"]["members"][0]["selector"]["exactMatch"]["name"] = std::string(63, 'a');
  EXPECT_THAT(policy_errors(o), IsEmpty());
}

TEST_F(HyperNodeCrd, PolicyRegexMatchPatternNotEmpty) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "";
  EXPECT_THAT(
      policy_errors(o),
      ElementsAre("spec.members[1].selector.regexMatch.pattern: member regexMatch pattern is required"));
}

TEST_F(HyperNodeCrd, PolicyRegexMatchParenthesesBalanced) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "gpu-(a|b";
  EXPECT_THAT(policy_errors(o),
              ElementsAre("spec.members[1].selector.regexMatch.pattern: member regexMatch pattern "
                          "is invalid: unmatched parentheses"));
  // The rule only looks at patterns that hold an opener, as written.
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "gpu-a)";
  EXPECT_THAT(policy_errors(o), IsEmpty());
}

TEST_F(HyperNodeCrd, PolicyRegexMatchBracketsBalanced) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "gpu-[0-9";
  EXPECT_THAT(policy_errors(o), ElementsAre(HasSubstr("unmatched square brackets")));
}

TEST_F(HyperNodeCrd, PolicyRegexMatchBracesBalanced) {
  auto o = hypernode_with_every_selector_kind();
  o["spec"]["members"][1]["selector"]["regexMatch"]["pattern"] = "gpu-[0-9]{2";
  EXPECT_THAT(policy_errors(o), ElementsAre(HasSubstr("unmatched curly braces")));
}

// --- loading, and the keywords the HyperNode CRD does not use --------------------------------------

std::string crd_text(const std::string& schema_body) {
  return "apiVersion: apiextensions.k8s.io/v1\n"
         "kind: CustomResourceDefinition\n"
         "metadata: {name: widgets.example.com}\n"
         "spec:\n"
         "  group: example.com\n"
         "  names: {kind: Widget, plural: widgets}\n"
         "  scope: Namespaced\n"
         "  versions:\n"
         "  - name: v1\n"
         "    schema:\n"
         "      openAPIV3Schema:\n" +
         schema_body;
}

std::expected<CrdSchema, std::string> load_text(const TempDir& dir, const std::string& text) {
  auto path = dir.path() / "crd.yaml";
  write_text(path, text);
  return load_crd_schema(path, "v1");
}

TEST(CrdLoading, MissingFileVersionOrDocument) {
  TempDir dir;
  EXPECT_THAT(load_crd_schema(dir.path() / "absent.yaml").error(), HasSubstr("no such file"));
  auto path = dir.path() / "other.yaml";
  write_text(path, "kind: ConfigMap\n");
  EXPECT_THAT(load_crd_schema(path).error(), HasSubstr("no CustomResourceDefinition"));
  EXPECT_THAT(load_text(dir, crd_text("        type: object\n")).has_value(), true);
  write_text(path, crd_text("        type: object\n"));
  EXPECT_THAT(load_crd_schema(path, "v2").error(), HasSubstr("no version named 'v2'"));
}

TEST(CrdLoading, UnknownKeywordsAndRulesAreRefused) {
  TempDir dir;
  auto bad_keyword = load_text(dir, crd_text("        type: object\n        oneOf: []\n"));
  ASSERT_FALSE(bad_keyword.has_value());
  EXPECT_THAT(bad_keyword.error(),
              AllOf(HasSubstr("openAPIV3Schema.oneOf"), HasSubstr("unsupported schema keyword")));
  auto bad_rule = load_text(dir, crd_text("        type: object\n"
                                          "        x-kubernetes-validations:\n"
                                          "        - rule: self.a > 1\n"));
  ASSERT_FALSE(bad_rule.has_value());
  EXPECT_THAT(bad_rule.error(), HasSubstr("CEL rule not implemented by this validator: self.a > 1"));
}

TEST(CrdLoading, PolicyWithAnUnknownExpressionIsRefused) {
  TempDir dir;
  auto path = dir.path() / "vap.yaml";
  write_text(path,
             "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
             "metadata: {name: p}\nspec:\n  failurePolicy: Fail\n  validations:\n"
             "  - expression: object.spec.tier < 5\n    message: too high\n");
  auto policy = load_admission_policy(path);
  ASSERT_FALSE(policy.has_value());
  EXPECT_THAT(policy.error(), HasSubstr("vap.yaml: spec.validations[0]: expression not implemented"));
}

TEST(CrdKeywords, NumbersItemsSetsBooleansNullablePreserveAndIntOrString) {
  TempDir dir;
  auto crd = load_text(dir, crd_text(R"(        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 1, maximum: 8, format: int32}
              ratio: {type: number, maximum: 1, exclusiveMaximum: true}
              enabled: {type: boolean}
              tags: {type: array, maxItems: 2, x-kubernetes-list-type: set, items: {type: string}}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items: {type: object, properties: {port: {type: integer}}}
              note: {type: string, nullable: true}
              blob: {type: object, x-kubernetes-preserve-unknown-fields: true}
              size: {x-kubernetes-int-or-string: true}
              uid: {type: string, format: uuid}
)"));
  ASSERT_TRUE(crd.has_value()) << crd.error();
  json ok = {{"apiVersion", "example.com/v1"},
             {"kind", "Widget"},
             {"metadata", {{"name", "w"}}},
             {"spec",
              {{"replicas", 8},
               {"ratio", 0.5},
               {"enabled", true},
               {"tags", {"a", "b"}},
               {"ports", {{{"port", 80}}, {{"port", 443}}}},
               {"note", nullptr},
               {"blob", {{"anything", {{"goes", 1}}}}},
               {"size", "10Gi"},
               {"uid", "123e4567-e89b-12d3-a456-426614174000"}}}};
  EXPECT_THAT(validate_against_crd(*crd, ok), IsEmpty());
  json bad = ok;
  bad["spec"]["replicas"] = 9;
  bad["spec"]["ratio"] = 1.0;
  bad["spec"]["enabled"] = "yes";
  bad["spec"]["tags"] = {"a", "a", "b"};
  bad["spec"]["ports"] = {{{"port", 80}}, {{"port", 80}}};
  bad["spec"]["size"] = 1.5;
  bad["spec"]["uid"] = "nope";
  EXPECT_THAT(
      validate_against_crd(*crd, bad),
      ElementsAre(StartsWith("spec.enabled: Invalid value: \"string\""),
                  StartsWith("spec.ports[1]: Duplicate"),
                  StartsWith("spec.ratio: Invalid value: 1.0: should be less than or equal to 1"),
                  StartsWith("spec.replicas: Invalid value: 9"), StartsWith("spec.size: Invalid value"),
                  StartsWith("spec.tags: Too many: 3"), StartsWith("spec.tags[1]: Duplicate value"),
                  StartsWith("spec.uid: Invalid value: \"nope\": must be in uuid format")));
}

// The API server checks `pattern` with Go's regexp: RE2 syntax (no lookahead, which ECMAScript has)
// and an unanchored search.
TEST(CrdPattern, IsGoRegexpSyntaxAndAnUnanchoredSearch) {
  auto crd_with_pattern = [](const TempDir& dir, const std::string& pattern) {
    const auto path = dir.path() / "crd.yaml";
    write_text(path, R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.io}
spec:
  group: example.io
  names: {kind: Thing, plural: things}
  scope: Cluster
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              name: {type: string, pattern: ')" +
                         pattern + "'}\n");
    return load_crd_schema(path);
  };
  TempDir dir;
  auto lookahead = crd_with_pattern(dir, "^(?=a)a$");
  ASSERT_FALSE(lookahead.has_value());
  EXPECT_THAT(lookahead.error(), HasSubstr("pattern does not compile"));
  auto inner = crd_with_pattern(dir, "b+");
  ASSERT_TRUE(inner.has_value()) << inner.error();
  const nlohmann::json thing = {{"apiVersion", "example.io/v1alpha1"},
                                {"kind", "Thing"},
                                {"metadata", {{"name", "t"}}},
                                {"spec", {{"name", "abbc"}}}};
  EXPECT_THAT(validate_against_crd(*inner, thing), IsEmpty());
  nlohmann::json other = thing;
  other["spec"]["name"] = "ac";
  EXPECT_THAT(validate_against_crd(*inner, other),
              ElementsAre(StartsWith("spec.name: Invalid value: \"ac\": should match 'b+'")));
}

}  // namespace
}  // namespace hypertopo::testing
