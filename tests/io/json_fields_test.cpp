// The one set of tolerant JSON field readers (io/json_fields.h): what each gives for a field that is
// there, absent, null or of another type, and that none of them throws on what a user or a client sent.
#include "io/json_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace hypertopo::io {
namespace {

using nlohmann::json;

const json kPod = json::parse(R"({
  "metadata": {"name": "w-0", "namespace": "ml", "labels": {"app": "x"}, "uid": 7, "annotations": null},
  "spec": {"containers": [{"name": "main"}], "nodeName": ["not", "a", "string"]},
  "count": 3
})");

TEST(JsonFields, StrAtTakesOnlyAString) {
  EXPECT_EQ(str_at(kPod["metadata"], "name"), "w-0");
  EXPECT_EQ(str_at(kPod["metadata"], "uid"), "");  // a number
  EXPECT_EQ(str_at(kPod["metadata"], "absent"), "");
  EXPECT_EQ(str_at(kPod["spec"], "nodeName"), "");  // a list
  EXPECT_EQ(str_at(json("text"), "name"), "");      // not an object
  EXPECT_EQ(str_at(json(), "name"), "");
}

TEST(JsonFields, StrViewAtTakesOnlyAStringAndViewsTheTreesOwn) {
  const std::string_view name = str_view_at(kPod["metadata"], "name");
  EXPECT_EQ(name, "w-0");
  EXPECT_EQ(name.data(), kPod["metadata"]["name"].get_ref<const std::string&>().data());  // no copy
  EXPECT_EQ(str_view_at(kPod["metadata"], "uid"), "");                                    // a number
  EXPECT_EQ(str_view_at(kPod["metadata"], "absent"), "");
  EXPECT_EQ(str_view_at(kPod["spec"], "nodeName"), "");  // a list
  EXPECT_EQ(str_view_at(json("text"), "name"), "");      // not an object
  EXPECT_EQ(str_view_at(json(), "name"), "");
}

TEST(JsonFields, MemberWalksAPathAndGivesAnEmptyObjectWhereItEnds) {
  EXPECT_EQ(str_at(member(kPod, "metadata"), "namespace"), "ml");
  EXPECT_EQ(member(kPod, "count"), json(3));  // any type, as written
  EXPECT_EQ(member(kPod, "absent"), json::object());
  EXPECT_EQ(member(member(member(kPod, "absent"), "deeper"), "still"), json::object());
  EXPECT_TRUE(member(member(kPod, "metadata"), "annotations").is_null());  // written as null
  EXPECT_EQ(member(json::array({1}), "x"), json::object());
}

TEST(JsonFields, ValueOrNullTellsAbsentFromTheWrongType) {
  EXPECT_TRUE(value_or_null(kPod, "absent").is_null());
  EXPECT_TRUE(value_or_null(json(42), "x").is_null());
  EXPECT_EQ(value_or_null(kPod, "count"), json(3));
  EXPECT_TRUE(value_or_null(kPod["spec"], "nodeName").is_array());
}

TEST(JsonFields, ObjectAtAndListAtTakeOnlyTheirType) {
  EXPECT_EQ(object_at(kPod, "metadata")["labels"]["app"], "x");
  EXPECT_EQ(object_at(kPod, "count"), json::object());
  EXPECT_EQ(object_at(kPod["metadata"], "annotations"), json::object());  // null
  EXPECT_EQ(list_at(kPod["spec"], "containers").size(), 1u);
  EXPECT_EQ(list_at(kPod, "metadata"), json::array());
  EXPECT_EQ(list_at(json("x"), "y"), json::array());
}

TEST(JsonFields, FieldTakesTheFirstNamePresentAndNotNull) {
  const json args = {{"Pod", nullptr}, {"pod", {{"a", 1}}}, {"Nodes", json::array()}};
  ASSERT_NE(field(args, {"Pod", "pod"}), nullptr);
  EXPECT_EQ(*field(args, {"Pod", "pod"}), json({{"a", 1}}));
  EXPECT_EQ(field(args, {"nodenames", "NodeNames"}), nullptr);
  EXPECT_EQ(field(json(1), {"x"}), nullptr);
}

}  // namespace
}  // namespace hypertopo::io
