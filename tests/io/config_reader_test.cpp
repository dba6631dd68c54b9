// io::ConfigReader: every check gives "<file>: <key.path>: <what>", and each accepts what it should.
#include "io/config_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace hypertopo::io {
namespace {

YAML::Node yaml(const std::string& text) { return YAML::Load(text); }

template <typename T>
std::string error_of(const std::expected<T, Error>& result) {
  return result ? std::string("(no error)") : result.error().message();
}

TEST(ConfigMessage, NamesFileKeyAndWhatLeavingOutEmptyParts) {
  EXPECT_EQ(config_message("a.yaml", "x.y", "must be a string"), "a.yaml: x.y: must be a string");
  EXPECT_EQ(config_message("a.yaml", "", "expected a mapping"), "a.yaml: expected a mapping");
  EXPECT_EQ(config_message("", "time", "is required"), "time: is required");
  EXPECT_EQ(unknown_key_error("t.jsonl:3", "arive", {"time", "arrive"}).error().message(),
            "t.jsonl:3: arive: unknown key (known: time, arrive)");
  EXPECT_EQ(unknown_key_error("c.yaml", "config.arg", {}).error().message(),
            "c.yaml: config.arg: unknown key (known: none)");
  EXPECT_EQ(config_error("f", "k", "w").error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(key_path("", "a"), "a");
  EXPECT_EQ(key_path("a", "b"), "a.b");
  EXPECT_EQ(key_path("a", ""), "a");
  EXPECT_EQ(indexed("rules", 2), "rules[2]");
}

TEST(ConfigReader, UnknownKeysAreNamedWithTheirPathAndTheKnownOnes) {
  const ConfigReader r("c.yaml");
  EXPECT_TRUE(r.only_keys(yaml("{a: 1, b: 2}"), {"a", "b"}, "top"));
  EXPECT_EQ(error_of(r.only_keys(yaml("{a: 1, c: 2}"), {"a", "b"}, "top")),
            "c.yaml: top.c: unknown key (known: a, b)");
  EXPECT_EQ(error_of(r.only_keys(yaml("{c: 2}"), {"a"}, "")), "c.yaml: c: unknown key (known: a)");
  EXPECT_EQ(error_of(r.only_keys(yaml("{[1]: 2}"), {"a"}, "s")), "c.yaml: s: keys must be strings");
  // mapping(): absent and `key:` are an empty section; anything but a mapping is not.
  EXPECT_TRUE(r.mapping(YAML::Node(), "s", {"a"}));
  EXPECT_TRUE(r.mapping(yaml("s:")["s"], "s", {"a"}));
  EXPECT_EQ(error_of(r.mapping(yaml("[1]"), "s", {"a"})), "c.yaml: s: must be a mapping");
  EXPECT_EQ(error_of(r.mapping(yaml("{b: 1}"), "s", {"a"})), "c.yaml: s.b: unknown key (known: a)");
}

TEST(ConfigReader, TypesAreCheckedWithThePathInTheMessage) {
  const ConfigReader r("c.yaml");
  EXPECT_EQ(r.text(yaml("abc"), "k").value(), "abc");
  EXPECT_EQ(error_of(r.text(yaml("[a]"), "k")), "c.yaml: k: must be a string");
  EXPECT_EQ(error_of(r.text(YAML::Node(YAML::NodeType::Undefined), "k")), "c.yaml: k: must be a string");
  EXPECT_EQ(error_of(r.nonempty_text(yaml("''"), "k")), "c.yaml: k: must not be empty");
  EXPECT_EQ(r.strings(yaml("[a, b]"), "l").value(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(error_of(r.strings(yaml("a"), "l")), "c.yaml: l: must be a list of strings");
  EXPECT_EQ(error_of(r.strings(yaml("[a, {b: 1}]"), "l")), "c.yaml: l[1]: must be a string");
  EXPECT_EQ(r.boolean(yaml("false"), "b").value(), false);
  EXPECT_EQ(r.boolean(yaml("True"), "b").value(), true);
  EXPECT_EQ(error_of(r.boolean(yaml("maybe"), "b")), "c.yaml: b: must be true or false");
}

TEST(ConfigReader, NumbersOutsideTheirRangeNameTheRange) {
  const ConfigReader r("c.yaml");
  EXPECT_EQ(r.integer(yaml("8080"), "http.port", 1, 65535).value(), 8080);
  for (const char* bad : {"0", "65536", "80.5", "eighty", "8080x", "99999999999999999999999"}) {
    EXPECT_EQ(error_of(r.integer(yaml(bad), "http.port", 1, 65535)),
              "c.yaml: http.port: must be an integer in [1, 65535]")
        << bad;
  }
  EXPECT_DOUBLE_EQ(r.number(yaml("0.25"), "f", 0, 1).value(), 0.25);
  for (const char* bad : {"1.5", "-0.1", ".nan", "x", "[1]"})
    EXPECT_EQ(error_of(r.number(yaml(bad), "f", 0, 1)), "c.yaml: f: must be a number in [0, 1]") << bad;
}

TEST(ConfigReader, DurationsAndPeriods) {
  const ConfigReader r("c.yaml");
  EXPECT_EQ(r.duration(yaml("1h30m"), "d").value(), std::chrono::minutes(90));
  EXPECT_EQ(r.duration(yaml("250ms"), "d").value(), std::chrono::milliseconds(250));
  EXPECT_EQ(r.duration(yaml("90"), "d").value(), std::chrono::seconds(90));
  EXPECT_EQ(
      error_of(r.duration(yaml("5 minutes"), "d")),
      "c.yaml: d: '5 minutes' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a number of seconds)");
  EXPECT_EQ(error_of(r.duration(yaml("-5s"), "d")), "c.yaml: d: '-5s' is negative");
  EXPECT_EQ(r.period(yaml("5m"), "p").value(), std::chrono::seconds(300));
  EXPECT_EQ(error_of(r.period(yaml("0s"), "p")), "c.yaml: p: must be greater than 0");
  EXPECT_EQ(error_of(r.period(yaml("1500ms"), "p")), "c.yaml: p: must be a whole number of seconds");
  EXPECT_EQ(parse_duration("1.5h").value(), std::chrono::minutes(90));
  EXPECT_EQ(parse_duration("1m1ms").value(), std::chrono::milliseconds(60001));
  EXPECT_FALSE(parse_duration("").has_value());
  EXPECT_FALSE(parse_duration("100000000h").has_value());
}

}  // namespace
}  // namespace hypertopo::io
