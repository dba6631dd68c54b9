// kubeconfig and in-cluster configuration: every way a file can name the server and the identity.
#include "k8s/client/kube_config.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::k8s {
namespace {

using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;

// "hello" in base64, and a fake PEM in base64 (the parser does not interpret PEM).
constexpr const char* kHelloB64 = "aGVsbG8=";

std::string two_contexts(const std::string& user_block) {
  return R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443
    certificate-authority-data: )" +
         std::string(kHelloB64) + R"(
- name: prod-cluster
  cluster:
    server: https://10.0.0.1
    certificate-authority: certs/ca.pem
    tls-server-name: api.prod
- name: lab-cluster
  cluster:
    server: https://lab:6443
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: lab
  context: {cluster: lab-cluster, user: dev-user}
users:
)" + user_block;
}

const std::string kUsers = R"(- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate: certs/client.pem
    client-key-data: a2V5
)";

TEST(Kubeconfig, CurrentContextWithInlineTokenAndCaData) {
  TempDir dir;
  auto config = parse_kubeconfig(two_contexts(kUsers), dir.path(), "", "test");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->context, "dev");
  EXPECT_EQ(config->server, "https://dev.example:6443");
  EXPECT_EQ(config->namespace_, "team-a");
  EXPECT_EQ(config->tls.ca_pem, "hello");
  EXPECT_FALSE(config->tls.insecure_skip_verify);
  EXPECT_EQ(config->token.token().value(), "dev-token");
}

TEST(Kubeconfig, NamedContextWithFilesRelativeToTheKubeconfig) {
  TempDir dir;
  write_text(dir.path() / "certs/ca.pem", "CA PEM");
  write_text(dir.path() / "certs/client.pem", "CERT PEM");
  write_text(dir.path() / "config", two_contexts(kUsers));
  auto config = load_kubeconfig(dir.path() / "config", "prod");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->server, "https://10.0.0.1");
  EXPECT_EQ(config->tls.ca_pem, "CA PEM");
  EXPECT_EQ(config->tls.server_name, "api.prod");
  EXPECT_EQ(config->tls.client_cert_pem, "CERT PEM");
  EXPECT_EQ(config->tls.client_key_pem, "key");
  EXPECT_EQ(config->token.token().value(), "");
}

TEST(Kubeconfig, InsecureOnlyWhenTheFileSaysSo) {
  TempDir dir;
  auto lab = parse_kubeconfig(two_contexts(kUsers), dir.path(), "lab", "test");
  ASSERT_TRUE(lab) << lab.error().message();
  EXPECT_TRUE(lab->tls.insecure_skip_verify);
}

TEST(Kubeconfig, TokenFileIsReadAndFollowed) {
  TempDir dir;
  write_text(dir.path() / "token", "first\n");
  std::string users = "- name: dev-user\n  user:\n    tokenFile: token\n";
  auto config = parse_kubeconfig(two_contexts(users), dir.path(), "dev", "test");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->token.token().value(), "first");
}

TEST(Kubeconfig, ErrorsNameTheKey) {
  TempDir dir;
  auto missing_context = parse_kubeconfig(two_contexts(kUsers), dir.path(), "staging", "kc.yaml");
  ASSERT_FALSE(missing_context);
  EXPECT_EQ(missing_context.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing_context.error().message().find("context \"staging\""), std::string::npos);
  EXPECT_NE(missing_context.error().message().find("kc.yaml"), std::string::npos);

  auto missing_file = parse_kubeconfig(two_contexts(kUsers), dir.path(), "prod", "kc.yaml");
  ASSERT_FALSE(missing_file);
  EXPECT_NE(missing_file.error().message().find("certificate-authority"), std::string::npos);

  std::string exec_user = "- name: dev-user\n  user:\n    exec: {command: aws}\n";
  auto exec = parse_kubeconfig(two_contexts(exec_user), dir.path(), "dev", "kc.yaml");
  ASSERT_FALSE(exec);
  EXPECT_NE(exec.error().message().find("users[dev-user].user.exec"), std::string::npos);

  auto not_yaml = parse_kubeconfig("clusters: [unclosed", dir.path(), "", "kc.yaml");
  ASSERT_FALSE(not_yaml);
  EXPECT_EQ(not_yaml.error().code(), ErrorCode::kParse);

  std::string bad_b64 = two_contexts(kUsers);
  bad_b64.replace(bad_b64.find(kHelloB64), 8, "ab*cd*ef");
  auto b64 = parse_kubeconfig(bad_b64, dir.path(), "dev", "kc.yaml");
  ASSERT_FALSE(b64);
  EXPECT_NE(b64.error().message().find("certificate-authority-data"), std::string::npos);
}

TEST(InCluster, ReadsServiceAccountFiles) {
  TempDir dir;
  write_text(dir.path() / "token", "sa-token\n");
  write_text(dir.path() / "ca.crt", "CA");
  write_text(dir.path() / "namespace", "hypertopo-system");
  InClusterSource source{"10.96.0.1", "443", dir.path() / "token", dir.path() / "ca.crt",
                         dir.path() / "namespace"};
  auto config = in_cluster_config(source);
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->tls.ca_pem, "CA");
  EXPECT_EQ(config->namespace_, "hypertopo-system");
  EXPECT_EQ(config->token.token().value(), "sa-token");

  source.host = "fd00::1";
  EXPECT_EQ(in_cluster_config(source)->server, "https://[fd00::1]:443");
}

TEST(InCluster, FailsOutsideACluster) {
  TempDir dir;
  auto none =
      in_cluster_config(InClusterSource{"", "", dir.path() / "t", dir.path() / "c", dir.path() / "n"});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kNotFound);
  auto no_token =
      in_cluster_config(InClusterSource{"h", "1", dir.path() / "t", dir.path() / "c", dir.path() / "n"});
  ASSERT_FALSE(no_token);
  EXPECT_NE(no_token.error().message().find(dir.path().string() + "/t"), std::string::npos);
}

TEST(TokenSource, ReReadsARotatedFile) {
  TempDir dir;
  auto path = dir.path() / "token";
  write_text(path, "one");
  auto source = TokenSource::file(path);
  EXPECT_EQ(source.token().value(), "one");
  // The kubelet rotates by swapping the file in (a new inode), even when the size stays the same.
  write_text(dir.path() / "token.new", "two");
  std::filesystem::rename(dir.path() / "token.new", path);
  EXPECT_EQ(source.token().value(), "two");
  TokenSource copy = source;  // copies share the cache
  write_text(dir.path() / "token.new", "three");
  std::filesystem::rename(dir.path() / "token.new", path);
  EXPECT_EQ(copy.token().value(), "three");
  std::filesystem::remove(path);
  EXPECT_FALSE(source.token().has_value());
}

// A token goes into the Authorization header as it is: a CR or LF in it would add a header of the
// token's choosing (Impersonate-User: system:admin). client-go's transport refuses such a value; so
// do we, naming where the token came from and never the token.
TEST(Kubeconfig, ATokenWithAControlCharacterIsRefusedNamingItsSource) {
  TempDir dir;
  const std::string inline_user =
      "- name: dev-user\n  user:\n    token: \"abc\\r\\nImpersonate-User: system:admin\"\n";
  auto inline_token = parse_kubeconfig(two_contexts(inline_user), dir.path(), "dev", "kc.yaml");
  ASSERT_FALSE(inline_token);
  EXPECT_NE(inline_token.error().message().find("kubeconfig kc.yaml: users[dev-user].user.token"),
            std::string::npos)
      << inline_token.error().message();
  EXPECT_NE(inline_token.error().message().find("control character"), std::string::npos);
  EXPECT_EQ(inline_token.error().message().find("system:admin"), std::string::npos);

  write_text(dir.path() / "token", "abc\nImpersonate-User: system:admin\n");
  auto file_token = parse_kubeconfig(two_contexts("- name: dev-user\n  user:\n    tokenFile: token\n"),
                                     dir.path(), "dev", "kc.yaml");
  ASSERT_FALSE(file_token);
  EXPECT_NE(file_token.error().message().find((dir.path() / "token").string()), std::string::npos)
      << file_token.error().message();
  EXPECT_NE(file_token.error().message().find("tokenFile"), std::string::npos);

  // A rotated file picks up the bad token later: refused when it is read, never sent.
  write_text(dir.path() / "token", "good\n");
  auto rotated = parse_kubeconfig(two_contexts("- name: dev-user\n  user:\n    tokenFile: token\n"),
                                  dir.path(), "dev", "kc.yaml");
  ASSERT_TRUE(rotated) << rotated.error().message();
  write_text(dir.path() / "token", "good\rX-Evil: 1\n");
  auto later = rotated->token.token();
  ASSERT_FALSE(later);
  EXPECT_NE(later.error().message().find("control character"), std::string::npos);
}

// We implement no proxy; client-go would use one, so a proxy the kubeconfig or the environment
// names is an error rather than silently bypassed.
TEST(Kubeconfig, AProxyIsRefusedWithAClearError) {
  TempDir dir;
  std::string with_proxy = two_contexts(kUsers);
  const std::string anchor = "    server: https://dev.example:6443\n";
  with_proxy.replace(with_proxy.find(anchor), anchor.size(), anchor + "    proxy-url: http://proxy:3128\n");
  auto proxied = parse_kubeconfig(with_proxy, dir.path(), "dev", "kc.yaml");
  ASSERT_FALSE(proxied);
  EXPECT_NE(proxied.error().message().find("clusters[dev-cluster].cluster.proxy-url is not supported"),
            std::string::npos)
      << proxied.error().message();

  write_text(dir.path() / "config", two_contexts(kUsers));
  const char* saved_proxy = std::getenv("HTTPS_PROXY");
  const char* saved_no_proxy = std::getenv("NO_PROXY");
  const std::string keep_proxy = saved_proxy ? saved_proxy : "";
  const std::string keep_no_proxy = saved_no_proxy ? saved_no_proxy : "";
  ::setenv("HTTPS_PROXY", "http://proxy:3128", 1);
  ::unsetenv("NO_PROXY");
  ::unsetenv("no_proxy");
  auto from_env = load_kubeconfig(dir.path() / "config", "dev");
  ::setenv("NO_PROXY", "localhost,.example", 1);
  auto exempt = load_kubeconfig(dir.path() / "config", "dev");
  if (saved_proxy)
    ::setenv("HTTPS_PROXY", keep_proxy.c_str(), 1);
  else
    ::unsetenv("HTTPS_PROXY");
  if (saved_no_proxy)
    ::setenv("NO_PROXY", keep_no_proxy.c_str(), 1);
  else
    ::unsetenv("NO_PROXY");
  ASSERT_FALSE(from_env);
  EXPECT_NE(from_env.error().message().find("HTTPS_PROXY is set"), std::string::npos)
      << from_env.error().message();
  EXPECT_NE(from_env.error().message().find("dev.example"), std::string::npos) << from_env.error().message();
  EXPECT_TRUE(exempt) << exempt.error().message();
}

// $KUBECONFIG=a:b:c merged as kubectl merges it (client-go tools/clientcmd/loader.go,
// ClientConfigLoadingRules.Load): the first file to name a cluster, user or context wins it whole,
// current-context comes from the first file that sets one, and relative paths resolve against the
// folder of the file each entry came from.
TEST(KubeconfigFiles, TheFirstFileToNameAnEntryWinsItWholeAndPathsResolveAgainstItsOwnFolder) {
  TempDir dir;
  const auto a = dir.path() / "a" / "config";
  const auto b = dir.path() / "b" / "config";
  const auto c = dir.path() / "c" / "config";
  write_text(dir.path() / "a" / "ca.pem", "CA of a");
  write_text(dir.path() / "b" / "ca.pem", "CA of b");
  write_text(dir.path() / "b" / "token", "token-from-b\n");
  // a sets no current-context; b's is the first.
  write_text(a, R"(apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://prod-a:6443", certificate-authority: ca.pem}
users:
- name: me
  user: {token: token-a}
contexts:
- name: prod
  context: {cluster: prod, user: me, namespace: from-a}
)");
  write_text(b, R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster: {server: "https://prod-b:6443", insecure-skip-tls-verify: true, tls-server-name: b-name}
- name: lab
  cluster: {server: "https://lab:6443", certificate-authority: ca.pem}
users:
- name: me
  user: {token: token-b}
- name: lab-user
  user: {tokenFile: token}
contexts:
- name: prod
  context: {cluster: lab, user: lab-user}
- name: lab
  context: {cluster: lab, user: lab-user}
)");
  write_text(c, "apiVersion: v1\nkind: Config\ncurrent-context: lab\n");

  auto prod = load_kubeconfig_files({a, b, c});
  ASSERT_TRUE(prod) << prod.error().message();
  EXPECT_EQ(prod->context, "prod");                // b's current-context: a sets none, c's comes later
  EXPECT_EQ(prod->namespace_, "from-a");           // a's context "prod", not b's
  EXPECT_EQ(prod->server, "https://prod-a:6443");  // a's cluster "prod" ...
  EXPECT_EQ(prod->tls.ca_pem, "CA of a");
  EXPECT_FALSE(prod->tls.insecure_skip_verify);  // ... whole: b's other fields for it are ignored
  EXPECT_EQ(prod->tls.server_name, "");
  EXPECT_EQ(prod->token.token().value(), "token-a");

  // Entries only b names, with b's relative paths read from b's folder.
  auto lab = load_kubeconfig_files({a, b, c}, "lab");
  ASSERT_TRUE(lab) << lab.error().message();
  EXPECT_EQ(lab->server, "https://lab:6443");
  EXPECT_EQ(lab->tls.ca_pem, "CA of b");
  EXPECT_EQ(lab->token.token().value(), "token-from-b");

  // The order decides: b first.
  auto b_first = load_kubeconfig_files({b, a});
  ASSERT_TRUE(b_first) << b_first.error().message();
  EXPECT_EQ(b_first->server, "https://lab:6443");  // b's context "prod" names the cluster lab
  EXPECT_EQ(b_first->token.token().value(), "token-from-b");

  // c first: its current-context wins.
  auto c_first = load_kubeconfig_files({c, a, b});
  ASSERT_TRUE(c_first) << c_first.error().message();
  EXPECT_EQ(c_first->context, "lab");
}

TEST(KubeconfigFiles, MissingFilesAndEmptyEntriesAreSkippedAndAPathIsReadOnce) {
  EXPECT_EQ(split_kubeconfig_list("::/x/missing:a::a:b:"),
            (std::vector<std::filesystem::path>{"/x/missing", "a", "b"}));
  EXPECT_TRUE(split_kubeconfig_list("").empty());

  TempDir dir;
  const auto real = dir.path() / "config";
  write_text(real, two_contexts(kUsers));
  const auto empty = dir.path() / "empty";
  write_text(empty, "");  // an empty file is an empty config
  auto config = load_kubeconfig_files({dir.path() / "missing", empty, real});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->context, "dev");
  EXPECT_EQ(config->server, "https://dev.example:6443");

  auto none = load_kubeconfig_files({dir.path() / "missing", dir.path() / "gone"});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(
      none.error().message().find((dir.path() / "missing").string() + ":" + (dir.path() / "gone").string()),
      std::string::npos)
      << none.error().message();
}

// $KUBECONFIG's files together are bounded, as each file is: the sizes are summed before any file is
// read, so five files of 3.5 MiB (sparse, all NUL bytes: parsing one would be an error of its own)
// are refused at the fifth, named with the bound, and the first four are never parsed.
TEST(KubeconfigFiles, AListPastSixteenMiBIsRefusedNamingTheFileWhereItPassedTheBound) {
  TempDir dir;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i <= 5; ++i) {
    files.push_back(dir.path() / ("config-" + std::to_string(i)));
    write_text(files.back(), "");
    std::filesystem::resize_file(files.back(), std::uintmax_t{7} << 19);  // 3.5 MiB
  }
  auto refused = load_kubeconfig_files(files);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "kubeconfig " + files[4].string() +
                ": the $KUBECONFIG files total 18350080 bytes up to this one, over "
                "the bound of 16 MiB");

  // Four of them are 14 MiB: within the bound, and read (the NUL bytes are the first file's error).
  files.pop_back();
  auto read = load_kubeconfig_files(files);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find(files[0].string()), std::string::npos) << read.error().message();
  EXPECT_EQ(read.error().message().find("16 MiB"), std::string::npos) << read.error().message();
}

TEST(KubeconfigFiles, AnErrorNamesTheFileAtFault) {
  TempDir dir;
  const auto good = dir.path() / "good";
  const auto broken = dir.path() / "broken";
  write_text(good, two_contexts(kUsers));
  write_text(broken, "clusters: [unclosed");
  auto unparsable = load_kubeconfig_files({good, broken});
  ASSERT_FALSE(unparsable);
  EXPECT_NE(unparsable.error().message().find(broken.string()), std::string::npos)
      << unparsable.error().message();

  // An entry that is wrong is reported against the file it came from, not the first file.
  const auto bad_server = dir.path() / "bad-server";
  write_text(bad_server,
             "clusters:\n- name: other\n  cluster: {server: 'ftp://x'}\ncontexts:\n- name: other\n"
             "  context: {cluster: other}\n");
  auto wrong = load_kubeconfig_files({good, bad_server}, "other");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("kubeconfig " + bad_server.string() +
                                         ": clusters[other].cluster.server must be an http(s) URL"),
            std::string::npos)
      << wrong.error().message();

  // One file naming an entry twice is an error there, as client-go's conversion makes it.
  const auto twice = dir.path() / "twice";
  write_text(twice, "users:\n- name: u\n  user: {token: a}\n- name: u\n  user: {token: b}\n");
  auto duplicate = load_kubeconfig_files({good, twice});
  ASSERT_FALSE(duplicate);
  EXPECT_NE(
      duplicate.error().message().find("kubeconfig " + twice.string() + ": users: duplicate name \"u\""),
      std::string::npos)
      << duplicate.error().message();

  // A context no file names: every file read is named.
  auto missing = load_kubeconfig_files({good, bad_server}, "staging");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("kubeconfig " + good.string() + ":" + bad_server.string() +
                                           ": context \"staging\" not found"),
            std::string::npos)
      << missing.error().message();

  // A directory in the list is not skipped as missing: kubectl reports it too.
  std::filesystem::create_directories(dir.path() / "a-directory");
  auto directory = load_kubeconfig_files({dir.path() / "a-directory", good});
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().message().find((dir.path() / "a-directory").string()), std::string::npos)
      << directory.error().message();
}

}  // namespace
}  // namespace hypertopo::k8s
