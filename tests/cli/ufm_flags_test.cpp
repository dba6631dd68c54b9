// `hypertopo discover --source ufm:URL --ufm-*` against the fake UFM server (the in-tree loopback
// HTTPS server; there is no UFM Enterprise here), through the same entry point as the binary.
#include <gtest/gtest.h>

#include "cli/commands.h"
#include "tests/support/fixtures.h"
#include "tests/support/ufm/fake_ufm_server.h"
#include "tests/support/ufm/ufm_generator.h"

namespace hypertopo::cli {
namespace {

testing::CapturedRun run_ufm(std::vector<std::string> args) {
  return testing::run_captured(run_cli, std::move(args));
}

TEST(UfmCli, DiscoverTakesTheUfmFlags) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "creds" / "username", "admin\n");
  testing::write_text(dir.path() / "creds" / "password", "pa55-word-xyz\n");
  testing::FakeUfmServer server;
  server.set_basic_auth("admin", "pa55-word-xyz");
  auto fabric = testing::generate_ufm_fabric({.pods = 2, .leaves_per_pod = 2, .hosts_per_leaf = 3});
  server.set_records("ports", fabric.ports);
  server.set_records("links", fabric.links);
  ASSERT_TRUE(server.start().has_value());
  testing::write_text(dir.path() / "ca.pem", server.ca_pem());

  auto found = run_ufm({"discover", "--source", "ufm:" + server.url(), "--ufm-credentials",
                        (dir.path() / "creds").string(), "--ufm-ca", (dir.path() / "ca.pem").string(),
                        "--ufm-page-size", "20"});
  ASSERT_EQ(found.code, 0) << found.err;
  EXPECT_NE(found.out.find("node-11"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("leaf"), std::string::npos);
  EXPECT_EQ(found.err.find("pa55-word-xyz"), std::string::npos) << found.err;
  EXPECT_NE(server.targets().front().find("rpp=20"), std::string::npos);

  // Without the CA the certificate is not trusted, and the error says what to do.
  auto untrusted = run_ufm(
      {"discover", "--source", "ufm:" + server.url(), "--ufm-credentials", (dir.path() / "creds").string()});
  EXPECT_EQ(untrusted.code, 3);
  EXPECT_NE(untrusted.err.find("--ufm-ca"), std::string::npos) << untrusted.err;

  auto insecure = run_ufm({"discover", "--source", "ufm:" + server.url(), "--ufm-credentials",
                           (dir.path() / "creds").string(), "--ufm-insecure"});
  EXPECT_EQ(insecure.code, 0) << insecure.err;
  EXPECT_NE(insecure.err.find("hypertopo: warning: ufm: TLS certificate verification is off"),
            std::string::npos)
      << insecure.err;
  EXPECT_EQ(insecure.err.find("warning: ufm: warning:"), std::string::npos) << insecure.err;
}

// A password written into the URL is refused, and no message repeats it (it was printed twice).
TEST(UfmCli, APasswordInTheUrlIsRefusedAndRedacted) {
  auto r = run_ufm({"discover", "--source", "ufm:https://admin:Hunter2-in-url@ufm.example"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find("Hunter2-in-url"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("Hunter2-in-url"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("must not carry credentials"), std::string::npos) << r.err;
}

// http:// would send the password in clear text: refused unless --ufm-insecure.
TEST(UfmCli, PlainHttpNeedsTheInsecureFlag) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "creds" / "username", "admin\n");
  testing::write_text(dir.path() / "creds" / "password", "pa55-word-xyz\n");
  testing::FakeUfmServer server(/*tls=*/false);
  server.set_basic_auth("admin", "pa55-word-xyz");
  auto fabric = testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 2});
  server.set_records("ports", fabric.ports);
  server.set_records("links", fabric.links);
  ASSERT_TRUE(server.start().has_value());
  auto refused = run_ufm(
      {"discover", "--source", "ufm:" + server.url(), "--ufm-credentials", (dir.path() / "creds").string()});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("clear text"), std::string::npos) << refused.err;
  EXPECT_EQ(server.requests(), 0);
  auto allowed = run_ufm({"discover", "--source", "ufm:" + server.url(), "--ufm-credentials",
                          (dir.path() / "creds").string(), "--ufm-insecure"});
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("clear text"), std::string::npos) << allowed.err;
}

TEST(UfmCli, UfmFlagsWithoutAUfmSourceAreAnError) {
  auto r = run_ufm({"discover", "--source", "demo:model", "--ufm-insecure"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--source ufm:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hypertopo::cli
