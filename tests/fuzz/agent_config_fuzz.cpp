// The agent's YAML config (the ConfigMap every agent reads).
#include <string>

#include "agent/config/agent_config.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(agent_config) { (void)hypertopo::agent::parse_agent_config(std::string(input), "fuzz.yaml"); }
