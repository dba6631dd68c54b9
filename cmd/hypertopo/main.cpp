// hypertopo: one binary, many subcommands; all logic lives in libraries the tests link.
#include "cli/commands.h"

int main(int argc, char** argv) { return hypertopo::cli::run_cli(argc, argv); }
