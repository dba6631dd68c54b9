// text/terminal_safe.h: names and messages from the fabric or the cluster, made safe to print.
//
// A host name learnt over LLDP, a HyperNode's name or its FabricDegraded condition's message is
// whatever some switch, agent or person put there. Printed raw, an ESC sequence in it retitles the
// terminal ("\x1b]0;...\x07"), clears it ("\x1b[2J") or rewrites lines already shown. Every text
// writer passes such a field through terminal_safe(), which spells each control character out as a
// C escape: ESC becomes the four characters `\x1b`. kubectl guards its output the same way for ESC
// and CR (k8s.io/cli-runtime pkg/printers/terminal.go, WriteEscaped, which writes them as "^[" and
// "\r"); here every control character is spelled, so no other one (BEL, BS, C1 CSI) gets through.
// Tabs and line breaks are spelled out too (`\t`, `\n`, `\r`): a field printed on one line stays on
// it. JSON and YAML outputs do not use it; they escape by their format.
//
//   std::cout << "  " << text::terminal_safe(hypernode_name) << "\n";
//   terminal_safe("leaf\x1b[2J") == "leaf\\x1b[2J"
#pragma once

#include <string>
#include <string_view>

namespace hypertopo::text {

// `in` with every C0 control byte, DEL and C1 control (U+0080..U+009F, which some terminals obey as
// ESC sequences) spelled out; a backslash is kept as it is. Everything else, UTF-8 included, is
// unchanged. Returns `in` itself, copied, when there is nothing to spell out.
std::string terminal_safe(std::string_view in);

}  // namespace hypertopo::text
