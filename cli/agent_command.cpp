// `hypertopo agent`: the agent process (agent/runtime/agent_daemon.h): probe, publish, elect,
// rebuild and reconcile; /healthz, /readyz and /metrics; hot reload of the config; SIGTERM ends it
// gracefully (the leader stops acting, then releases its Lease).
//
// --role splits the work the way node-feature-discovery splits nfd-worker and nfd-master:
//   node    the DaemonSet: the config's node probes, this node's NodeReport; no Lease, no fabric
//   leader  the Deployment: the Lease, the fabric sources and the reconcilers; no node probe
//   all     both in one process (one pod per node, or a workstation)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "agent/config/agent_config.h"
#include "agent/runtime/agent_daemon.h"
#include "agent/runtime/leader_dry_run.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/discovery_setup.h"
#include "cli/unit_flags.h"
#include "io/bounded_file.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/kube_config.h"
#include "net/http_server.h"
#include "telemetry/metrics.h"
#include "text/terminal_safe.h"

namespace hypertopo::cli {
namespace {

enum class AgentRole { kAll, kNode, kLeader };

struct AgentOptions {
  std::string config_file;
  std::string role = "all";
  std::string kubeconfig;
  std::string context;
  std::string node_name;
  std::string pod_name;
  std::string namespace_;
  std::string work_dir;  // where the private work directory (mkdtemp, 0700) is made; "": $TMPDIR
  std::string log_level;
  int http_port = -1;        // -1: the config's http.port
  std::string http_address;  // "": the config's http.address
  bool insecure_listen = false;
  double reload_seconds = 5;
  bool check = false;
  bool dry_run = false;         // --role leader: plan one cycle, print it, write nothing
  std::string output = "text";  // of the --dry-run plan: text or json
  double kube_api_qps = 0;      // > 0: overrides the config's apiClient.qps
  int kube_api_burst = 0;       // > 0: overrides the config's apiClient.burst
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string read_text(const std::string& path) {
  // The config's text, to notice edits; a read error reads as empty and the reload reports it.
  return io::read_bounded_file(path, io::kConfigFileLimit).value_or("");
}

AgentRole role_of(const std::string& name) {
  if (name == "node") return AgentRole::kNode;
  if (name == "leader") return AgentRole::kLeader;
  return AgentRole::kAll;
}

// What this role runs of the config: the leader workload probes no node (the DaemonSet's pods
// publish every NodeReport, and a leader pod on a node of its own would race them); the node role
// never elects, so its leader sources never run.
agent::AgentConfig for_role(agent::AgentConfig config, AgentRole role) {
  if (role == AgentRole::kLeader) {
    for (auto& source : config.sources) {
      if (source.role == agent::SourceRole::kNodeProbe) source.enabled = false;
    }
  }
  return config;
}

// While every address of the host serves unauthenticated clients, the log says so again at this
// interval (as the extender does), so that the warning is never only in a log that has rotated away.
constexpr std::chrono::seconds kInsecureReminder{300};

// The flags win over the file, at start and at every reload (a reload then sees no change of them).
agent::AgentConfig with_http_flags(agent::AgentConfig config, const AgentOptions& opts) {
  if (!opts.http_address.empty()) config.http_address = opts.http_address;
  if (opts.http_port >= 0) config.http_port = static_cast<std::uint16_t>(opts.http_port);
  return config;
}

// "ib-local, nvlink" or "none".
std::string kinds_run(const agent::AgentConfig& config, agent::SourceRole source_role) {
  std::string out;
  for (const auto& s : config.sources) {
    if (!s.enabled || s.role != source_role) continue;
    out += (out.empty() ? "" : ", ") + s.kind;
  }
  return out.empty() ? "none" : out;
}

int run_agent(const AgentOptions& opts) {
  // What the config and flags say is checked first: those errors are the caller's (2); what fails
  // once the agent talks to the cluster or binds its listener is a runtime failure (3).
  auto error = [](const std::string& message, int status = kExitInvalid) {
    return report_error("agent", message, status);
  };
  const AgentRole role = role_of(opts.role);
  auto loaded = agent::load_agent_config(opts.config_file);
  if (!loaded) return error(loaded.error().message());
  agent::AgentConfig config = for_role(std::move(*loaded), role);
  if (!opts.http_address.empty()) {
    in_addr v4{};
    in6_addr v6{};
    if (inet_pton(AF_INET, opts.http_address.c_str(), &v4) != 1 &&
        inet_pton(AF_INET6, opts.http_address.c_str(), &v6) != 1)
      return error("--http-address " + opts.http_address +
                   ": not an IPv4 or IPv6 address (127.0.0.1, the pod's IP; no host name, no brackets)");
  }
  config = with_http_flags(std::move(config), opts);
  // Before anything connects or binds, and in --check too: an unauthenticated listener on every
  // address of the host is refused outright.
  const std::string address_key = opts.http_address.empty() ? "http.address" : "--http-address";
  if (auto ok = agent::check_http_exposure(config, opts.insecure_listen, address_key); !ok)
    return error(ok.error().message());
  const bool exposed = agent::http_is_exposed(config);
  if (opts.dry_run && role != AgentRole::kLeader)
    return error("--dry-run: only with --role leader (the node role writes only its own NodeReport)");
  if (opts.output != "text" && !opts.dry_run) return error("-o " + opts.output + ": only with --dry-run");
  if (opts.check) {
    const std::size_t n = config.sources.size();
    std::cout << opts.config_file << ": ok (" << n << (n == 1 ? " source" : " sources") << ")\n"
              << "role " << opts.role << ": node probes: "
              << (role == AgentRole::kLeader ? "none" : kinds_run(config, agent::SourceRole::kNodeProbe))
              << "; leader sources: "
              << (role == AgentRole::kNode ? "none" : kinds_run(config, agent::SourceRole::kLeader)) << "\n";
    return 0;
  }
  const std::string level_name = opts.log_level.empty() ? config.log_level : opts.log_level;
  auto level = telemetry::parse_log_level(level_name);
  if (!level) return error("--log-level " + level_name + ": not one of trace, debug, info, warn, error");
  telemetry::Logger log = telemetry::make_stderr_logger(*level);
  // The --insecure-listen warning is written whatever logLevel says.
  telemetry::Logger warn_always = telemetry::make_stderr_logger(std::min(*level, telemetry::LogLevel::kWarn));

  auto node = resolve_node_name(opts.node_name);
  if (!node) return error(node.error().message());
  agent::AgentIdentity identity;
  identity.node_name = *node;
  identity.pod_name = opts.pod_name.empty() ? env_or("POD_NAME", *node) : opts.pod_name;

  auto cluster = opts.kubeconfig.empty() ? k8s::in_cluster_config(k8s::InClusterSource::from_environment())
                                         : k8s::load_kubeconfig(opts.kubeconfig, opts.context);
  if (!cluster) {
    return error(cluster.error().message() +
                 (opts.kubeconfig.empty() ? " (not in a cluster: pass --kubeconfig)" : ""));
  }
  // A kubeconfig context's namespace is usually "default", so only the pod's own namespace counts.
  identity.namespace_ = opts.namespace_;
  if (identity.namespace_.empty()) identity.namespace_ = env_or("POD_NAMESPACE", "");
  if (identity.namespace_.empty() && opts.kubeconfig.empty()) identity.namespace_ = cluster->namespace_;
  if (identity.namespace_.empty()) identity.namespace_ = "hypertopo-system";

  // Each client has its own rate limit, as kube-controller-manager gives each controller its own
  // (apiClient in agent_config.h says why the defaults): the label export's thousands of PATCHes
  // never stand in the way of the HyperNode writes. The user agent names the agent and its part, for
  // the API server's audit log and its Priority and Fairness rules.
  if (opts.kube_api_qps > 0) config.api_qps = opts.kube_api_qps;
  if (opts.kube_api_burst > 0) config.api_burst = opts.kube_api_burst;
  const std::string user_agent = "hypertopo-agent (linux) " + opts.role;
  k8s::ClientOptions api_options;
  api_options.qps = config.api_qps;
  api_options.burst = config.api_burst;
  api_options.user_agent = user_agent;
  auto client = k8s::KubeClient::create(*cluster, api_options);
  if (!client) return error(client.error().message());
  api_options.user_agent = user_agent + " node-labels";
  auto label_client = k8s::KubeClient::create(*cluster, api_options);
  if (!label_client) return error(label_client.error().message());
  // The Lease client answers within the renew deadline or not at all (leader_elector.h).
  k8s::ClientOptions election_options;
  election_options.connect_timeout = std::min(config.renew_deadline / 4, std::chrono::milliseconds(2000));
  election_options.request_timeout = std::min(config.renew_deadline / 2, std::chrono::milliseconds(5000));
  election_options.retry.max_attempts = 1;
  election_options.qps = 0;
  election_options.user_agent = user_agent + " leader-election";
  // The node role takes no part in the election: without an election client the daemon only probes.
  std::unique_ptr<k8s::KubeClient> election;
  if (role != AgentRole::kNode) {
    auto made = k8s::KubeClient::create(*cluster, election_options);
    if (!made) return error(made.error().message());
    election = std::move(*made);
  }

  // Scratch space is private: never a fixed name in a shared directory that another local user
  // could take first or point somewhere else.
  // --work-dir names where that directory is made (created when missing); what is there already,
  // or a symlink's target, is never chmod-ed (--work-dir /tmp must leave /tmp as it is).
  std::string work_dir;
  bool own_work_dir = false;
  {
    std::error_code ec;
    std::filesystem::path parent = opts.work_dir;
    if (parent.empty()) {
      parent = std::filesystem::temp_directory_path(ec);
    } else {
      std::filesystem::create_directories(parent, ec);
      if (ec) return error("--work-dir " + opts.work_dir + ": " + ec.message(), kExitRuntime);
    }
    std::string pattern = (parent / "hypertopo-agent-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      return error("cannot make a private work directory under " + pattern + ": " + std::strerror(errno),
                   kExitRuntime);
    work_dir = pattern;
    own_work_dir = true;
  }

  if (opts.dry_run) {
    // One leader cycle with reads only: no Lease, no listener, no loop.
    auto plan = agent::plan_leader_cycle(
        config,
        {.client = client->get(), .namespace_ = identity.namespace_, .work_dir = work_dir, .log = log});
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    if (!plan) return report_error("agent", plan.error());
    for (const auto& w : plan->warnings)
      std::cerr << "hypertopo: warning: " << text::terminal_safe(w) << "\n";
    if (opts.output == "json") {
      std::cout << agent::write_plan_json(plan->writes).dump(2) << "\n";
    } else {
      std::istringstream lines(agent::write_plan_text(plan->writes));
      for (std::string line; std::getline(lines, line);) std::cout << text::terminal_safe(line) << "\n";
      std::cout << plan->hypernodes.summary_line() << "\n";
      if (plan->export_on || !plan->node_labels.writes.empty()) {
        std::cout << "node labels: patched=" << plan->node_labels.writes.size()
                  << " unchanged=" << plan->node_labels.unchanged << " held=" << plan->node_labels.held
                  << "\n";
      }
    }
    std::cerr << "hypertopo: dry run (" << plan->reports << " NodeReports, " << plan->nodes << " Nodes"
              << (plan->complete ? "" : ", discovery incomplete") << "): nothing was written\n";
    return 0;
  }

  // Signals go to the thread that waits for them, never to the worker threads started below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  telemetry::MetricsRegistry metrics;
  net::HttpServer http({.address = config.http_address,
                        .port = config.http_port,
                        .tls_cert_file = config.http_tls_cert_file,
                        .tls_key_file = config.http_tls_key_file,
                        .tls_client_ca_file = config.http_tls_client_ca_file,
                        .threads = 1});
  agent::AgentDaemon daemon(config, identity,
                            {.client = client->get(),
                             .election_client = election.get(),
                             .label_client = label_client->get(),
                             .metrics = &metrics,
                             .log = log,
                             .work_dir = work_dir});
  daemon.register_routes(http);
  if (auto started = http.start(); !started) return error(started.error().message(), kExitRuntime);
  const std::string where = agent::host_port(config.http_address, http.port());
  const std::string warning = "WARNING: --insecure-listen: " + where +
                              " serves /healthz, /readyz and /metrics to any client that reaches any "
                              "address of this host, without authentication";
  // The warning comes first: whoever waits for the "serving" line has already seen it.
  if (exposed) warn_always(telemetry::LogLevel::kWarn, warning);
  log(telemetry::LogLevel::kInfo, "serving /healthz, /readyz and /metrics on " + where +
                                      (config.http_tls_client_ca_file.empty()
                                           ? (config.http_tls_cert_file.empty() ? " (HTTP)" : " (HTTPS)")
                                           : " (HTTPS, client certificates required)"));
  auto next_reminder = std::chrono::steady_clock::now() + kInsecureReminder;
  daemon.start();

  // Hot reload: the mounted ConfigMap changes under us (an atomic symlink swap), so compare the
  // text every reload interval; SIGHUP reloads at once. A config that does not load is logged and
  // the running one kept.
  std::string loaded_text = read_text(opts.config_file);
  const auto period = std::chrono::duration<double>(opts.reload_seconds);
  for (;;) {
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(period);
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(period - secs);
    timespec timeout{static_cast<time_t>(secs.count()), static_cast<long>(nanos.count())};
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (exposed && std::chrono::steady_clock::now() >= next_reminder) {
      warn_always(telemetry::LogLevel::kWarn, warning);
      next_reminder = std::chrono::steady_clock::now() + kInsecureReminder;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      log(telemetry::LogLevel::kInfo,
          std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": shutting down");
      break;
    }
    if (sig < 0 && errno != EAGAIN && errno != EINTR) break;
    const std::string text = read_text(opts.config_file);
    if (sig != SIGHUP && text == loaded_text) continue;
    loaded_text = text;
    auto next = agent::load_agent_config(opts.config_file);
    if (!next) {
      log(telemetry::LogLevel::kError,
          "config not reloaded, keeping the running one: " + next.error().message());
      continue;
    }
    daemon.reload(with_http_flags(for_role(std::move(*next), role), opts));
  }
  daemon.stop();
  http.stop();
  if (own_work_dir) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  }
  return 0;
}

}  // namespace

void add_agent_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<AgentOptions>();
  auto* cmd =
      app.add_subcommand("agent",
                         "Run the agent: probe this node and publish its NodeReport (--role node, the "
                         "DaemonSet), or keep the HyperNodes in step with the fabric while holding the "
                         "Lease (--role leader, the Deployment), or both");
  cmd->footer(
      "In a pod the Kubernetes connection comes from the service account; outside, pass --kubeconfig.\n"
      "The node name comes from --node-name, $NODE_NAME or the hostname; the Lease identity from\n"
      "--pod-name, $POD_NAME or the node name; the namespace from --namespace, $POD_NAMESPACE, the\n"
      "service account's namespace or hypertopo-system. SIGTERM stops gracefully (the Lease is\n"
      "released), SIGHUP reloads the config; it is also reloaded when the file changes.\n"
      "\nExamples:\n"
      "  hypertopo agent --role node --config /etc/hypertopo/config.yaml\n"
      "  hypertopo agent --role leader --config deploy/base/config.yaml --check\n"
      "  hypertopo agent --role leader --config my.yaml --kubeconfig ~/.kube/config --dry-run\n"
      "  hypertopo agent --config my.yaml --kubeconfig ~/.kube/config --node-name dgx-001 --http-port 9090\n"
      "\n/healthz, /readyz and /metrics are served on 127.0.0.1 unless http.address or --http-address\n"
      "names another address; the manifests pass the pod's IP (--http-address=$(POD_IP)). Every address\n"
      "at once (0.0.0.0, ::) is refused unless http.tls sets certFile, keyFile and clientCAFile, or\n"
      "--insecure-listen is given.");
  cmd->add_option("--config", opts->config_file, "Agent config YAML (see deploy/base/config.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--role", opts->role,
                  "node: probe this node and publish its NodeReport (the DaemonSet); leader: hold the Lease, "
                  "run the fabric sources and reconcile (the leader Deployment); all: both")
      ->check(CLI::IsMember({"all", "node", "leader"}))
      ->capture_default_str();
  cmd->add_flag("--check", opts->check, "Validate the config, say what the role runs, and exit");
  cmd->add_flag("--dry-run", opts->dry_run,
                "With --role leader: run the sources once, build the tree and print what the leader would "
                "create, update (field by field) and delete of HyperNodes and Node labels; write nothing");
  cmd->add_option("-o,--output", opts->output,
                  "Format of the --dry-run plan: text, or json (a list of {action, kind, name, changes: "
                  "[{path, old, new}]})")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--kubeconfig", opts->kubeconfig, "kubeconfig file (default: in-cluster config)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--context", opts->context, "kubeconfig context (default: the current one)");
  cmd->add_option("--node-name", opts->node_name, "This node's name");
  cmd->add_option("--pod-name", opts->pod_name, "Identity in the leader Lease");
  cmd->add_option("--namespace", opts->namespace_, "Namespace of NodeReports, the Lease and Events");
  cmd->add_option("--work-dir", opts->work_dir,
                  "Where the private scratch directory of this run is made (default: $TMPDIR); it is "
                  "removed at exit");
  cmd->add_option("--kube-api-qps", opts->kube_api_qps,
                  "Requests per second of each API client (default: the config's apiClient.qps, 100)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--kube-api-burst", opts->kube_api_burst,
                  "Requests at once of each API client (default: the config's apiClient.burst, 200)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--log-level", opts->log_level,
                  "trace, debug, info, warn or error (default: the config's)");
  cmd->add_option("--http-port", opts->http_port,
                  "Port of /healthz, /readyz, /metrics (default: the config's; 0: any)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--http-address", opts->http_address,
                  "IP address of /healthz, /readyz, /metrics (default: the config's http.address, "
                  "127.0.0.1; in a pod: --http-address=$(POD_IP)); 0.0.0.0 and :: need http.tls with "
                  "clientCAFile, or --insecure-listen");
  cmd->add_flag("--insecure-listen", opts->insecure_listen,
                "serve /healthz, /readyz and /metrics on every address (0.0.0.0, ::) without TLS client "
                "authentication (logged at start and every 5 minutes)");
  add_duration_flag(cmd, "--reload-interval", opts->reload_seconds,
                    "Time between checks of the config file: 5s, 1m, or seconds (default 5s)",
                    std::chrono::milliseconds(1), std::chrono::hours(24));
  cmd->callback([opts, &action] { action = [opts] { return run_agent(*opts); }; });
}

}  // namespace hypertopo::cli
