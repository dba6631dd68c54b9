// text::terminal_safe: what a terminal would obey is spelled out, everything else is kept.
#include "text/terminal_safe.h"

#include <gtest/gtest.h>

namespace hypertopo::text {
namespace {

TEST(TerminalSafe, ControlCharactersAreSpelledOutAsCEscapes) {
  EXPECT_EQ(terminal_safe("leaf\x1b]0;evil\x07"), "leaf\\x1b]0;evil\\x07");
  EXPECT_EQ(terminal_safe("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(terminal_safe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(terminal_safe("del\x7f"), "del\\x7f");
  // One field, one line: tabs and line breaks do not move the cursor either.
  EXPECT_EQ(terminal_safe("a\tb\nc\rd"), "a\\tb\\nc\\rd");
}

TEST(TerminalSafe, C1ControlsAreSpelledOutButOtherUtf8IsKept) {
  // U+009B (CSI) in UTF-8, and as a lone byte: some terminals obey both.
  EXPECT_EQ(terminal_safe("x\xc2\x9b"
                          "2J"),
            "x\\u009b2J");
  EXPECT_EQ(terminal_safe("x\x9b"
                          "2J"),
            "x\\x9b2J");
  // Letters beyond ASCII, including ones whose UTF-8 continuation bytes are 0x80..0x9f, are text.
  EXPECT_EQ(terminal_safe("r\xc3\xa9seau"), "r\xc3\xa9seau");                          // é
  EXPECT_EQ(terminal_safe("\xe2\x80\x94 \xe2\x94\x80"), "\xe2\x80\x94 \xe2\x94\x80");  // — ─
  EXPECT_EQ(terminal_safe("dgx-01 \\ plain"), "dgx-01 \\ plain");
}

}  // namespace
}  // namespace hypertopo::text
