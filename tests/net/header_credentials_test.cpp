// The one check of a token bound for an Authorization header and the one basic-auth header maker,
// which the API server client, UFM and NetQ share.
#include "net/header_credentials.h"

#include <gtest/gtest.h>

namespace hypertopo::net {
namespace {

TEST(HeaderToken, AControlByteIsRefusedNamingWhereAndWhichByteNeverTheToken) {
  EXPECT_TRUE(check_header_token("abc.DEF-123_~+/=", "the bearer token file /t").has_value());
  EXPECT_TRUE(check_header_token("", "empty").has_value());
  auto lf = check_header_token("secret-42\nX-Evil: 1", "UFM token file /etc/ufm/token");
  ASSERT_FALSE(lf.has_value());
  EXPECT_EQ(lf.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(lf.error().message(),
            "UFM token file /etc/ufm/token: the token holds a control character (byte 10 at offset 9); it "
            "would be sent as an HTTP header");
  auto del = check_header_token(std::string("ab\x7f"), "kubeconfig users[0].user.token");
  ASSERT_FALSE(del.has_value());
  EXPECT_NE(del.error().message().find("byte 127 at offset 2"), std::string::npos) << del.error().message();
  EXPECT_EQ(del.error().message().find("ab"), std::string::npos) << del.error().message();
  // A tab is a control character too (httpguts allows it in a header value; a token never holds one).
  EXPECT_FALSE(check_header_token("a\tb", "x").has_value());
}

TEST(BasicAuthorization, IsRfc7617WithPaddedBase64) {
  // RFC 7617 section 2's own example.
  EXPECT_EQ(basic_authorization("Aladdin", "open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  // Every padding length: "a:" (2 bytes), "ab:" (3), "abc:" (4).
  EXPECT_EQ(basic_authorization("a", ""), "Basic YTo=");
  EXPECT_EQ(basic_authorization("ab", ""), "Basic YWI6");
  EXPECT_EQ(basic_authorization("abc", ""), "Basic YWJjOg==");
  EXPECT_EQ(basic_authorization("\xff", "\xfe"), "Basic /zr+");
}

}  // namespace
}  // namespace hypertopo::net
