// kubeconfig files (`--kubeconfig`): clusters, users, contexts, inline and file certificates.
#include <string>

#include "k8s/client/kube_config.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(kubeconfig) {
  // A base directory with nothing in it: relative certificate paths resolve to missing files.
  (void)hypertopo::k8s::parse_kubeconfig(std::string(input), "/nonexistent-fuzz-dir", "", "fuzz-kubeconfig");
}
