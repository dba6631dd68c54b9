// `hypertopo extender`: the kube-scheduler extender (filter/prioritize over HTTP) backed by watches.
#include <cerrno>
#include <csignal>
#include <ctime>
#include <iostream>
#include <thread>

#include "cli/cluster_flags.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/kube_config.h"
#include "scheduler/extender/cluster_watcher.h"
#include "scheduler/extender/extender_config.h"
#include "scheduler/extender/extender_http.h"

namespace hypertopo::cli {
namespace {

struct ExtenderFlags {
  std::string config, kubeconfig, context, listen, state;
  bool insecure_listen = false;
  std::string check;     // a path to probe on the running extender instead of running one
  int wait_seconds = 0;  // with --check: retry until 200 or this many seconds passed
};

// `--check PATH`: the pod's exec probes and postStart hook (deploy/overlays/extender): the listener
// is on loopback, where a kubelet httpGet probe (sent to the pod IP) never arrives, and the image
// has no curl. Exit 0 on 200, else 1 with the answer on stderr.
int check_extender(const scheduler::ExtenderConfig& cfg, const ExtenderFlags& flags) {
  if (!flags.check.starts_with("/")) {
    return report_error("extender", "--check: takes a path on the extender's listener, e.g. /readyz",
                        kExitInvalid);
  }
  auto target = scheduler::probe_target(cfg);
  if (!target) return report_error("extender", "--check: " + target.error().message(), kExitInvalid);
  auto ok = scheduler::wait_extender(
      *target, flags.check, std::chrono::seconds(flags.wait_seconds), std::chrono::milliseconds(250),
      [] { return std::chrono::steady_clock::now(); },
      [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); });
  // Not ready (or not answering): the question "is it ready?" has the answer no.
  if (!ok) return report_error("extender", "--check: " + ok.error().message(), kExitNoAnswer);
  return 0;
}

// While the listener takes unauthenticated clients on a reachable address, the log says so again at
// this interval, so that the warning is never only in a log that has rotated away.
constexpr std::time_t kInsecureReminderSeconds = 300;

int run_extender(const ExtenderFlags& flags) {
  auto cfg = scheduler::load_extender_config(flags.config);
  if (!cfg) return report_error("extender", cfg.error().message(), kExitInvalid);
  // A probe runs every few seconds: the warnings belong to the extender's own log.
  if (flags.check.empty())
    for (const auto& w : cfg->warnings) std::cerr << "hypertopo extender: warning: " << w << "\n";
  if (!flags.listen.empty()) {
    if (auto ok = scheduler::parse_listen(flags.listen, "--listen", *cfg); !ok)
      return report_error("extender", ok.error().message(), kExitInvalid);
  }
  if (!flags.check.empty()) return check_extender(*cfg, flags);
  if (!flags.state.empty()) cfg->service.state_file = flags.state;
  // Before anything connects or binds: an exposed, unauthenticated listener is refused outright.
  if (auto ok = scheduler::check_listen_exposure(*cfg, flags.insecure_listen); !ok)
    return report_error("extender", ok.error().message(), kExitInvalid);
  [[maybe_unused]] const bool exposed = !scheduler::listen_is_protected(*cfg);
  auto cluster = resolve_cluster({.kubeconfig = flags.kubeconfig, .context = flags.context});
  if (!cluster) return report_error("extender", cluster.error().message(), kExitInvalid);
  auto client = k8s::KubeClient::create(cluster->config);
  if (!client) return report_error("extender", client.error().message(), kExitInvalid);
  scheduler::ExtenderService service(cfg->service);
  if (auto ok = service.load_state(); !ok)
    return report_error("extender", ok.error().message(), kExitInvalid);
  // Signals are taken synchronously below; block them before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  scheduler::ClusterWatcher watcher(**client, service);
  watcher.start();
  net::HttpServerOptions http;
  http.address = cfg->listen_address;
  http.port = cfg->listen_port;
  http.tls_cert_file = cfg->tls_cert_file;
  http.tls_key_file = cfg->tls_key_file;
  http.tls_client_ca_file = cfg->tls_client_ca_file;
  http.limits = net::kExtenderHttpLimits;
  http.threads = 2;
  net::HttpServer server(http);
  scheduler::register_extender_routes(server, service, cfg->url_prefix);
  if (auto ok = server.start(); !ok) return report_error("extender", ok.error().message(), kExitRuntime);
  const std::string where = cfg->listen_address + ":" + std::to_string(server.port());
  const std::string warning = "hypertopo extender: WARNING: --insecure-listen: " + where +
                              " accepts filter requests from any client that reaches it, without "
                              "authentication; anyone there can create gang plans\n";
  // The warning comes first: whoever waits for the "serving" line has already seen it.
  if (exposed) std::cerr << warning << std::flush;
  std::cerr << "hypertopo extender: serving " << cfg->url_prefix << "/filter and " << cfg->url_prefix
            << "/prioritize on " << where
            << (cfg->tls_client_ca_file.empty() ? (cfg->tls_cert_file.empty() ? " (HTTP)" : " (HTTPS)")
                                                : " (HTTPS, client certificates required)")
            << "\n";
  for (;;) {
    const timespec reminder{.tv_sec = kInsecureReminderSeconds, .tv_nsec = 0};
    const int sig =
        exposed ? sigtimedwait(&stop_signals, nullptr, &reminder) : sigwaitinfo(&stop_signals, nullptr);
    if (sig == SIGINT || sig == SIGTERM) break;
    if (exposed && sig < 0 && errno == EAGAIN) std::cerr << warning << std::flush;
  }
  server.stop();
  watcher.stop();
  return 0;
}

}  // namespace

void add_extender_command(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("extender", "Run the kube-scheduler extender (topology-aware gang placement)");
  cmd->footer(
      "The config file (YAML or JSON; every key optional; an unknown key or a bad value is an error\n"
      "naming the file and the key):\n"
      "  apiVersion: hypertopo.io/v1alpha1\n"
      "  kind: ExtenderConfig\n"
      "  listen: 127.0.0.1:8888        ADDR:PORT; any address but loopback needs tls (or --insecure-listen)\n"
      "  urlPrefix: /scheduler         filter and prioritize are served under it\n"
      "  stateFile: PATH               gang plans survive restarts there (default: none, plans in memory)\n"
      "  planTTLSeconds: 10m           an idle gang plan is dropped after this (a duration or seconds;\n"
      "                                default 600, at most 168h)\n"
      "  schedulerConfig: PATH         volcano-scheduler.conf or its ConfigMap: binpack weights\n"
      "  fabricHealth: prefer-healthy  or exclude, ignore: gangs and FabricDegraded HyperNodes (default:\n"
      "                                the schedulerConfig's hypertopo.fabricHealth, else prefer-healthy)\n"
      "  tls: {certFile: PATH, keyFile: PATH, clientCAFile: PATH}\n"
      "                                HTTPS; clients must present a certificate clientCAFile signed\n"
      "  gangLabelKeys: [scheduling.x-k8s.io/pod-group, hypertopo.io/gang]\n"
      "  gangAnnotationKeys: [scheduling.k8s.io/group-name, hypertopo.io/gang]\n"
      "                                the pod label and annotation keys that name a gang, first found wins\n"
      "\nkube-scheduler calls the extender only for pods that request one of its managedResources\n"
      "(deploy/overlays/extender: nvidia.com/gpu). docs/placement.md: how gangs are read and planned.\n"
      "\nExample:\n"
      "  hypertopo extender --config extender.yaml --kubeconfig ~/.kube/config --state "
      "/var/lib/hypertopo/plans.json\n"
      "  hypertopo extender --config extender.yaml --check /readyz --wait 60   # until its view is filled");
  auto flags = std::make_shared<ExtenderFlags>();
  cmd->add_option("--config", flags->config, "extender config (YAML or JSON; the keys are below)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--kubeconfig", flags->kubeconfig,
                  "kubeconfig file (default: as kubectl: $KUBECONFIG, then ~/.kube/config, then the pod's "
                  "service account)");
  cmd->add_option("--context", flags->context, "kubeconfig context (default: its current-context)");
  cmd->add_option("--listen", flags->listen, "ADDR:PORT to serve on (overrides the config's listen)");
  cmd->add_option("--state", flags->state, "plan state file (overrides the config's stateFile)");
  cmd->add_flag("--insecure-listen", flags->insecure_listen,
                "serve a non-loopback address without TLS client authentication (logged at start and "
                "every 5 minutes)");
  cmd->add_option("--check", flags->check,
                  "probe PATH (/readyz, /healthz) on the running extender the config names and exit: 0 on "
                  "200, else 1 with its answer on stderr (the pod's exec probes and postStart hook)");
  cmd->add_option("--wait", flags->wait_seconds,
                  "with --check: ask again every 250 ms until 200 or SECONDS have passed")
      ->check(CLI::Range(0, 600));
  cmd->callback([&action, flags] { action = [flags] { return run_extender(*flags); }; });
}

}  // namespace hypertopo::cli
