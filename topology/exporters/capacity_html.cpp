#include "topology/exporters/capacity_html.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace hypertopo::topology::exporters {
namespace {

using nlohmann::json;

// Text for HTML element content and attribute values.
std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON that may stand inside <script>: no '<' (so no "</script>" nor "<!--"), '>' or '&' is left,
// each becomes its \u escape, which JSON.parse reads back as the same character. Text that is not
// UTF-8 is replaced by U+FFFD rather than refused.
std::string script_safe_json(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Names as people order them: "rack-2" before "rack-10" (runs of digits compare as numbers).
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal but for leading zeros: a total order all the same
}

std::string percent(double share) { return std::to_string(static_cast<int>(share * 100 + 0.5)) + "%"; }

std::string link_text(const BadLink& l) {
  std::string text = l.end_a;
  if (!l.end_b.empty()) text += " - " + l.end_b;
  text += ": " + std::string(reason_name(l.reason)) + ", " + l.seen;
  if (!l.expected.empty()) text += ", expected " + l.expected;
  return text;
}

// The degraded part of a domain's record: its own health where the build assessed it, else what
// the cluster's condition says.
json degraded_record(const Domain& d, const CapacityHtmlOptions& options) {
  json deg;
  std::vector<std::string> lines;
  if (d.health.degraded()) {
    deg["r"] = std::string(reason_name(d.health.reason()));
    deg["h"] = "uplinks " + percent(d.health.uplink_healthy) + " healthy, internal " +
               percent(d.health.internal_healthy);
    for (const auto& l : d.health.bad_links) lines.push_back(link_text(l));
  } else if (auto it = options.degraded.find(d.name); it != options.degraded.end()) {
    deg["r"] = it->second.reason.empty() ? std::string("FabricDegraded") : it->second.reason;
    const std::string& m = it->second.message;
    for (std::size_t at = 0; at < m.size();) {
      std::size_t end = m.find("; ", at);
      if (end == std::string::npos) end = m.size();
      if (end > at) lines.push_back(m.substr(at, end - at));
      at = end + 2;
    }
  } else {
    return nullptr;
  }
  json listed = json::array();
  for (std::size_t i = 0; i < lines.size() && i < options.max_links_listed; ++i) listed.push_back(lines[i]);
  deg["l"] = std::move(listed);
  if (lines.size() > options.max_links_listed) deg["more"] = lines.size() - options.max_links_listed;
  return deg;
}

json page_data(const Tree& tree, const GpuUsage& usage, const CapacityHtmlOptions& options) {
  const bool coloured = !usage.empty();
  // A host's own bad link (host to leaf), by node name.
  std::map<std::string, std::string> bad_host_links;
  for (const auto& d : tree.domains()) {
    for (const auto& l : d.health.bad_links) {
      if (!l.host.empty()) bad_host_links.try_emplace(l.host, link_text(l));
    }
  }
  auto by_name = [&](DomainId a, DomainId b) {
    return natural_less(tree.domain(a).name, tree.domain(b).name);
  };
  json domains = json::array();
  std::size_t degraded = 0;
  std::int64_t allocatable = 0, used = 0;
  for (DomainId id = 0; id < tree.size(); ++id) {
    const Domain& d = tree.domain(id);
    std::vector<DomainId> children = d.children;
    std::ranges::sort(children, by_name);
    std::vector<std::string> members = d.nodes;
    std::ranges::sort(members, natural_less);
    json nodes = json::array();
    for (const auto& n : members) {
      json node{{"n", n}};
      if (auto it = usage.find(n); it != usage.end()) {
        node["a"] = it->second.allocatable;
        node["u"] = it->second.used;
        allocatable += it->second.allocatable;
        used += it->second.used;
      }
      if (auto it = bad_host_links.find(n); it != bad_host_links.end()) node["b"] = it->second;
      if (options.unavailable_nodes.contains(n)) node["x"] = true;
      nodes.push_back(std::move(node));
    }
    const auto totals = domain_gpu_totals(tree, id, usage);
    json record{{"n", d.name},
                {"t", d.tier},
                {"tn", d.tier_name},
                {"p", d.parent ? static_cast<std::int64_t>(*d.parent) : std::int64_t{-1}},
                {"c", children},
                {"k", tree.nodes_under(id).size()},
                {"a", totals.allocatable},
                {"u", totals.used},
                {"nodes", std::move(nodes)}};
    if (json deg = degraded_record(d, options); !deg.is_null()) {
      record["deg"] = std::move(deg);
      ++degraded;
    }
    domains.push_back(std::move(record));
  }
  std::vector<DomainId> roots = tree.roots();
  std::ranges::sort(roots, by_name);
  return json{{"coloured", coloured},
              {"roots", roots},
              {"nodeCount", tree.node_count()},
              {"tiers", tree.max_tier()},
              {"degraded", degraded},
              {"unavailable", options.unavailable_nodes.size()},
              {"gpus", {{"allocatable", allocatable}, {"used", used}}},
              {"domains", std::move(domains)}};
}

constexpr std::string_view kStyle = R"CSS(
:root { font-family: Helvetica, Arial, sans-serif; font-size: 14px; color: #222; }
body { margin: 0; }
header { position: sticky; top: 0; background: #f7f7f7; border-bottom: 1px solid #ccc; padding: 6px 12px; z-index: 1; }
h1 { font-size: 17px; margin: 0 0 2px 0; }
.sub, #summary { margin: 0 0 4px 0; color: #555; }
#controls { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
#search { width: 22em; padding: 3px 6px; }
#legend { display: flex; gap: 10px; flex-wrap: wrap; margin-top: 4px; font-size: 12px; align-items: center; }
#legend .box { padding: 0 6px; }
#results { margin: 4px 12px; padding: 0; list-style: none; max-height: 30vh; overflow: auto; }
#results li { display: inline-block; margin: 2px 6px 2px 0; }
#results .count { display: block; color: #555; }
#tree { padding: 6px 12px 24px 12px; }
.dom { margin-left: 18px; }
#tree > .dom { margin-left: 0; }
.row { display: flex; gap: 8px; align-items: center; min-height: 24px; white-space: nowrap; }
.tog { width: 22px; border: none; background: none; cursor: pointer; font-size: 13px; padding: 0; }
.box { display: inline-block; border: 1px solid #666; border-radius: 5px; padding: 1px 8px; background: #ffffff; }
.box.degraded { border: 3px solid #d94801; background: #fdae61; }
.meta { color: #444; }
.warn { color: #a33a00; font-weight: bold; }
.links { margin: 2px 0 2px 40px; padding: 0; color: #a33a00; font-size: 12px; list-style: "! "; }
.nodes { display: flex; flex-wrap: wrap; gap: 4px; margin: 2px 0 6px 40px; }
.node { display: inline-block; min-width: 100px; border: 1px solid #999; border-radius: 10px; padding: 0 6px; font-size: 12px; background: #ffffff; }
.node.bad { border: 2px dashed #d94801; }
.node.off { text-decoration: line-through; color: #666; }
.hit { outline: 3px solid #1f6fd0; outline-offset: 1px; }
.more { font-size: 12px; }
h2 { font-size: 15px; margin: 8px 0 4px 0; }
#overview { padding: 4px 12px 8px 12px; border-bottom: 1px solid #ccc; }
#list-title { padding: 0 12px; }
#ov-note, #gang-answer { margin: 2px 0; color: #333; }
#gang { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; margin: 4px 0; }
#gang input { width: 5.5em; padding: 2px 4px; }
#gang-answer { font-weight: bold; }
#gang-domains { list-style: none; margin: 2px 0; padding: 0; max-height: 5.5em; overflow: auto; font-size: 12px; }
#gang-domains li { display: inline-block; margin: 0 8px 0 0; }
#ov-legend { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; font-size: 12px; margin: 4px 0; }
#ov-legend .blk { display: inline-block; width: 14px; height: 14px; vertical-align: middle; }
#ov-map { display: flex; flex-wrap: wrap; gap: 8px; align-items: flex-start; margin: 6px 0; }
.panel { border: 1px solid #999; border-radius: 4px; padding: 2px 4px 4px 4px; background: #fafafa; }
.panel.deg { border: 2px solid #d94801; }
.panel.fit { border: 3px solid #31a354; }
.panel h3 { font-size: 12px; margin: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer; }
.pmeta { font-size: 11px; color: #444; margin: 0 0 2px 0; white-space: nowrap; }
.blocks { display: flex; flex-wrap: wrap; gap: 2px; }
.blk { box-sizing: border-box; border: 1px solid #666; cursor: pointer; overflow: hidden; font-size: 11px; padding: 1px 3px; color: #111; }
.blk.deg { border: 2px solid #d94801; }
.blk.fit { outline: 3px solid #31a354; outline-offset: -3px; }
.i0 { background: #eff3ff; }
.i1 { background: #bdd7e7; }
.i2 { background: #6baed6; }
.i3 { background: #3182bd; color: #fff; }
.i4 { background: #08519c; color: #fff; }
.iz { background: #d9d9d9; }
#free { font-size: 13px; margin: 2px 0; }
#free-blocks { display: inline; margin: 0; padding: 0; list-style: none; }
#free-blocks li { display: inline; margin: 0 0 0 8px; }
#free-blocks li + li::before { content: "\00b7  "; }
)CSS";

// The page's behaviour. Every text from the data goes through textContent or an attribute value,
// never markup; the DOM grows only with what is open (a domain's nodes 256 at a time).
constexpr std::string_view kScript = R"JS(
(function () {
  'use strict';
  var body = document.body;
  window.addEventListener('error', function (e) {
    body.setAttribute('data-error', String(e.message || e));
  });
  var data = JSON.parse(document.getElementById('hypertopo-data').textContent);
  var D = data.domains;
  var NODE_PAGE = 256, RESULT_LIMIT = 50;
  var ui = D.map(function () { return {el: null, tog: null, kids: null, nodeBox: null, more: null, open: false, shown: 0}; });
  var tree = document.getElementById('tree');
  var search = document.getElementById('search');
  var results = document.getElementById('results');
  var listTitle = document.getElementById('list-title');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function button(cls, text, onClick) {
    var b = el('button', cls, text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : many); }
  function fill(a, u) {
    if (!(a > 0)) return '#d9d9d9';
    var f = Math.min(u, a) / a;
    if (f >= 1) return '#e06666';
    if (f >= 0.75) return '#f6b26b';
    if (f >= 0.25) return '#ffd966';
    return '#93c47d';
  }

  function domainEl(i) {
    var d = D[i];
    var box = el('div', 'dom');
    box.id = 'd' + i;
    box.setAttribute('role', 'treeitem');
    box.setAttribute('aria-expanded', 'false');
    box.setAttribute('data-name', d.n);
    box.setAttribute('data-tier', String(d.t));
    var row = el('div', 'row');
    var tog = button('tog', '\u25b8', function () { setOpen(i, !ui[i].open); });
    tog.setAttribute('aria-label', 'expand or collapse');
    row.appendChild(tog);
    var name = el('span', 'box' + (d.deg ? ' degraded' : ''), d.n);
    if (data.coloured) name.style.background = fill(d.a, d.u);
    row.appendChild(name);
    var meta = d.tn + ', tier ' + d.t + ' \u00b7 ' + plural(d.k, 'node', 'nodes');
    if (data.coloured) meta += ' \u00b7 GPUs ' + d.u + '/' + d.a + ' used, ' + Math.max(d.a - d.u, 0) + ' free';
    row.appendChild(el('span', 'meta', meta));
    if (d.deg) row.appendChild(el('span', 'warn', 'DEGRADED ' + d.deg.r + (d.deg.h ? ' (' + d.deg.h + ')' : '')));
    box.appendChild(row);
    ui[i].el = box;
    ui[i].tog = tog;
    return box;
  }

  function nodeEl(nd) {
    var e = el('span', 'node' + (nd.b ? ' bad' : '') + (nd.x ? ' off' : ''), nd.n);
    e.setAttribute('data-node', nd.n);
    var tip = nd.n;
    if (data.coloured) {
      e.style.background = nd.a === undefined ? '#d9d9d9' : fill(nd.a, nd.u);
      tip += nd.a === undefined ? ': GPUs unknown' : ': GPUs ' + nd.u + '/' + nd.a + ' used';
    }
    if (nd.x) tip += '; cordoned or NotReady';
    if (nd.b) tip += '; bad link ' + nd.b;
    e.title = tip;
    return e;
  }

  function showNodes(i, upto) {
    var d = D[i], u = ui[i];
    var end = Math.min(d.nodes.length, Math.max(upto, u.shown));
    if (u.more) { u.more.remove(); u.more = null; }
    for (var k = u.shown; k < end; ++k) u.nodeBox.appendChild(nodeEl(d.nodes[k]));
    u.shown = end;
    if (end < d.nodes.length) {
      var left = d.nodes.length - end;
      u.more = button('more', 'show ' + Math.min(NODE_PAGE, left) + ' more (' + left + ' not shown)',
                      function () { showNodes(i, u.shown + NODE_PAGE); });
      u.nodeBox.appendChild(u.more);
    }
  }

  function renderKids(i) {
    var d = D[i], u = ui[i];
    var kids = el('div', 'kids');
    kids.setAttribute('role', 'group');
    if (d.deg && d.deg.l.length) {
      var list = el('ul', 'links');
      d.deg.l.forEach(function (t) { list.appendChild(el('li', null, t)); });
      if (d.deg.more) list.appendChild(el('li', null, 'and ' + d.deg.more + ' more'));
      kids.appendChild(list);
    }
    d.c.forEach(function (c) { kids.appendChild(domainEl(c)); });
    if (d.nodes.length) {
      u.nodeBox = el('div', 'nodes');
      kids.appendChild(u.nodeBox);
      showNodes(i, NODE_PAGE);
    }
    u.kids = kids;
    u.el.appendChild(kids);
  }

  function setOpen(i, open) {
    var u = ui[i];
    if (open && !u.kids) renderKids(i);
    u.open = open;
    if (u.kids) u.kids.hidden = !open;
    u.el.setAttribute('aria-expanded', open ? 'true' : 'false');
    u.tog.textContent = open ? '\u25be' : '\u25b8';
  }

  // The open frontier: the deepest open level's children, which "expand a tier" opens next.
  function frontier() {
    var level = data.roots.slice(), next;
    for (;;) {
      var closed = level.filter(function (i) { return !ui[i].open; });
      if (closed.length || !level.length) return closed;
      next = [];
      level.forEach(function (i) { next = next.concat(D[i].c); });
      if (!next.length) return [];
      level = next;
    }
  }
  function expandTier() { frontier().forEach(function (i) { setOpen(i, true); }); }
  function collapseAll() { ui.forEach(function (u, i) { if (u.el && u.open) setOpen(i, false); }); }
  function expandAll() {
    var stack = data.roots.slice();
    while (stack.length) {
      var i = stack.pop();
      setOpen(i, true);
      D[i].c.forEach(function (c) { stack.push(c); });
    }
  }

  // Lines a domain's open content takes: its members, its bad links, its nodes' rows.
  function rowsOf(i, perLine) {
    var d = D[i];
    return d.c.length + (d.deg ? d.deg.l.length : 0) + Math.ceil(Math.min(d.nodes.length, NODE_PAGE) / perLine);
  }
  // Opens whole levels from the top while the window still holds every line they show.
  function openToFit() {
    var first = tree.querySelector('.row');
    var rowHeight = first ? Math.max(first.getBoundingClientRect().height, 1) : 24;
    var top = tree.getBoundingClientRect().top;
    var budget = Math.max(data.roots.length, Math.floor((window.innerHeight - top) / rowHeight));
    var perLine = Math.max(1, Math.floor((window.innerWidth - 80) / 110));
    var level = data.roots.slice(), used = level.length;
    while (level.length) {
      var add = 0;
      level.forEach(function (i) { add += rowsOf(i, perLine); });
      if (used + add > budget) break;
      var next = [];
      level.forEach(function (i) { setOpen(i, true); next = next.concat(D[i].c); });
      used += add;
      level = next;
    }
    body.setAttribute('data-row-budget', String(budget));
    body.setAttribute('data-rows', String(used));
  }

  // Search: node names and domain names, substring, case-insensitive.
  var owner = null;
  function nodeOwners() {
    if (owner) return owner;
    owner = new Map();
    D.forEach(function (d, i) { d.nodes.forEach(function (nd, k) { owner.set(nd.n, [i, k]); }); });
    return owner;
  }
  var marked = [];
  function mark(e) {
    e.classList.add('hit');
    marked.push(e);
    e.scrollIntoView({block: 'center'});
  }
  function openPath(i) {
    var path = [];
    for (var j = D[i].p; j >= 0; j = D[j].p) path.unshift(j);
    path.forEach(function (j) { setOpen(j, true); });
  }
  function go(hit) {
    marked.forEach(function (e) { e.classList.remove('hit'); });
    marked = [];
    if (hit.node !== undefined) {
      var at = nodeOwners().get(hit.node);
      openPath(at[0]);
      setOpen(at[0], true);
      showNodes(at[0], at[1] + 1);
      mark(ui[at[0]].nodeBox.children[at[1]]);
    } else {
      openPath(hit.domain);
      mark(ui[hit.domain].el.firstChild);
    }
  }
  var hits = [];
  function find(query) {
    results.textContent = '';
    hits = [];
    var q = query.trim().toLowerCase();
    body.setAttribute('data-matches', '0');
    if (!q) { results.hidden = true; return; }
    var total = 0, exact = null;
    D.forEach(function (d, i) {
      var name = d.n.toLowerCase();
      if (name.indexOf(q) < 0) return;
      ++total;
      if (name === q) exact = {domain: i};
      if (hits.length < RESULT_LIMIT) hits.push({domain: i});
    });
    nodeOwners().forEach(function (at, n) {
      var name = n.toLowerCase();
      if (name.indexOf(q) < 0) return;
      ++total;
      if (name === q) exact = {node: n};
      if (hits.length < RESULT_LIMIT) hits.push({node: n});
    });
    if (exact) hits.unshift(exact);
    body.setAttribute('data-matches', String(total));
    results.hidden = false;
    results.appendChild(el('li', 'count', total === 0 ? 'nothing matches' :
        plural(total, 'match', 'matches') + (total > RESULT_LIMIT ? ', the first ' + RESULT_LIMIT + ' listed' : '')));
    hits.slice(exact ? 1 : 0).forEach(function (h) {
      var li = el('li');
      li.appendChild(button('hitlink', h.node !== undefined ? 'node ' + h.node : 'domain ' + D[h.domain].n,
                            function () { go(h); }));
      results.appendChild(li);
    });
  }
  search.addEventListener('input', function () { find(search.value); });
  search.addEventListener('keydown', function (e) { if (e.key === 'Enter' && hits.length) go(hits[0]); });
  document.getElementById('expand').addEventListener('click', expandTier);
  document.getElementById('collapse').addEventListener('click', collapseAll);
  document.getElementById('expand-all').addEventListener('click', expandAll);

  // ---- The overview: where the free nodes are, and where a gang fits. ----
  // Per domain, from the nodes under it: nodes, idle nodes (GPUs, none in use, not cordoned or
  // NotReady: whole free nodes), free GPUs. Domains are summed from the lowest tier up.
  var order = D.map(function (d, i) { return i; });
  order.sort(function (x, y) { return D[x].t - D[y].t || x - y; });
  var idle = new Array(D.length).fill(0), free = new Array(D.length).fill(0);
  function nodeFree(nd) { return nd.x || nd.a === undefined ? 0 : Math.max(nd.a - nd.u, 0); }
  order.forEach(function (i) {
    D[i].nodes.forEach(function (nd) {
      if (!nd.x && nd.a > 0 && nd.u === 0) ++idle[i];
      free[i] += nodeFree(nd);
    });
    if (D[i].p >= 0) { idle[D[i].p] += idle[i]; free[D[i].p] += free[i]; }
  });
  function idleClass(i) {
    var d = D[i];
    if (!data.coloured || !(d.a > 0) || !d.k) return 'iz';
    var f = idle[i] / d.k;
    return f >= 0.75 ? 'i4' : f >= 0.5 ? 'i3' : f >= 0.25 ? 'i2' : f > 0 ? 'i1' : 'i0';
  }
  function about(i) {
    var d = D[i];
    var t = d.n + ' (' + d.tn + ', tier ' + d.t + '): ' + plural(d.k, 'node', 'nodes');
    if (data.coloured) t += ', ' + idle[i] + ' idle, ' + free[i] + ' GPUs free';
    if (d.deg) t += ', DEGRADED ' + d.deg.r;
    if (gangCap && D[i].t <= gangCap.tier) t += '; the gang: room for ' + gangCap.cap[i] + ' of its ' + gangCap.pods + ' pods';
    return t;
  }
  function openInList(i) { go({domain: i}); }

  // Panels: the top tier, or the level below a lone root; in each, one block per member domain.
  var ovMap = document.getElementById('ov-map');
  var ovBlocks = [];  // [element, domain]
  var panelsOf = data.roots.slice();
  while (panelsOf.length === 1 && D[panelsOf[0]].c.length) panelsOf = D[panelsOf[0]].c.slice();
  var MAX_BLOCKS = 4000;
  var members = 0;
  panelsOf.forEach(function (i) { members += Math.max(D[i].c.length, 1); });
  var flat = members > MAX_BLOCKS;
  function drawOverview() {
    var kmax = 1, weight = 0;
    panelsOf.forEach(function (i) {
      (flat || !D[i].c.length ? [i] : D[i].c).forEach(function (j) { kmax = Math.max(kmax, D[j].k); });
    });
    panelsOf.forEach(function (i) {
      (flat || !D[i].c.length ? [i] : D[i].c).forEach(function (j) { weight += Math.max(D[j].k, 1) / kmax; });
    });
    // Areas by node count, scaled so that the map takes about the window below the header.
    var area = Math.max(window.innerWidth - 60, 300) * Math.max(window.innerHeight * 0.55, 240);
    var side = Math.max(6, Math.min(96, Math.floor(0.6 * Math.sqrt(area / Math.max(weight, 1)))));
    panelsOf.forEach(function (i) {
      var d = D[i];
      var panel = el('div', 'panel' + (d.deg ? ' deg' : ''));
      panel.setAttribute('data-panel', d.n);
      var kids = flat || !d.c.length ? [i] : d.c;
      var cols = Math.ceil(Math.sqrt(kids.length));
      panel.style.width = Math.max(cols * (side + 2), 140) + 'px';
      var head = el('h3', null, d.n);
      head.addEventListener('click', function () { openInList(i); });
      head.addEventListener('mouseenter', function () { head.title = about(i); });
      panel.appendChild(head);
      panel.appendChild(el('div', 'pmeta', plural(d.k, 'node', 'nodes') + (data.coloured ? ', ' + idle[i] + ' idle' : '')));
      var blocks = el('div', 'blocks');
      kids.forEach(function (j) {
        var s = Math.max(4, Math.round(side * Math.sqrt(Math.max(D[j].k, 1) / kmax)));
        var b = el('div', 'blk ' + idleClass(j) + (D[j].deg ? ' deg' : ''), s >= 64 ? D[j].n : undefined);
        b.setAttribute('data-domain', D[j].n);
        b.style.width = s + 'px';
        b.style.height = s + 'px';
        b.addEventListener('mouseenter', function () { b.title = about(j); });
        b.addEventListener('click', function () { openInList(j); });
        blocks.appendChild(b);
        ovBlocks.push([b, j]);
      });
      ovBlocks.push([panel, i]);
      panel.appendChild(blocks);
      ovMap.appendChild(panel);
    });
    var lone = data.roots.length === 1 && panelsOf[0] !== data.roots[0] ? D[data.roots[0]] : null;
    var some = panelsOf.length ? D[panelsOf[0]] : null;
    var note = some ? 'One panel per ' + some.tn + ' (tier ' + some.t + ')' +
        (lone ? ' under ' + lone.n : '') + (flat ? '' : ', one block per member domain') +
        '; block area by node count' + (data.coloured ? ', colour by idle nodes (GPU nodes with no GPU in use)' : '') +
        '. Click a block to open it in the list below.' : 'The tree is empty.';
    document.getElementById('ov-note').textContent = note;
  }

  // The largest free block per tier: the domain with the most free GPUs, the first in tree order
  // on a tie (as `hypertopo status -o text` lists it).
  function freeBlocks() {
    if (!data.coloured) return;
    var best = {};
    D.forEach(function (d, i) {
      if (best[d.t] === undefined || free[i] > free[best[d.t]]) best[d.t] = i;
    });
    var list = document.getElementById('free-blocks');
    Object.keys(best).map(Number).sort(function (x, y) { return y - x; }).forEach(function (t) {
      var i = best[t];
      var li = el('li', null, 'tier ' + t + ' (' + D[i].tn + '): ' + D[i].n + ', ' +
                  plural(free[i], 'GPU', 'GPUs') + ' free, ' + plural(idle[i], 'idle node', 'idle nodes'));
      li.setAttribute('data-tier', String(t));
      li.setAttribute('data-block', D[i].n);
      list.appendChild(li);
    });
  }

  // The gang: P pods of G GPUs each, all inside one domain of tier <= T (a required topology, as
  // `hypertopo place` takes it). A node holds floor(free GPUs / G) pods; a domain the sum over its
  // nodes. Like place, the answer is the lowest tier <= T where some domain holds all P; the
  // domains of that tier that hold them are the ones place chooses among.
  var GANG_LIST_LIMIT = 1000;
  var gangCap = null;
  var gPods = document.getElementById('gang-pods'), gGpus = document.getElementById('gang-gpus');
  var gTier = document.getElementById('gang-tier');
  var gAnswer = document.getElementById('gang-answer'), gDomains = document.getElementById('gang-domains');
  var tiers = [];
  D.forEach(function (d) { if (tiers.indexOf(d.t) < 0) tiers.push(d.t); });
  tiers.sort(function (x, y) { return x - y; });
  tiers.forEach(function (t) {
    var name = '';
    for (var i = 0; i < D.length && !name; ++i) if (D[i].t === t) name = D[i].tn;
    var o = el('option', null, t + ' (' + name + ')');
    o.value = String(t);
    gTier.appendChild(o);
  });
  if (tiers.length) gTier.value = String(tiers[tiers.length - 1]);

  function gangAnswer(pods, gpus, tier) {
    var cap = new Array(D.length).fill(0);
    order.forEach(function (i) {
      D[i].nodes.forEach(function (nd) { cap[i] += Math.floor(nodeFree(nd) / gpus); });
      if (D[i].p >= 0) cap[D[i].p] += cap[i];
    });
    var answer = {pods: pods, gpus: gpus, tier: tier, cap: cap, at: -1, fits: [], largest: -1};
    for (var k = 0; k < tiers.length && tiers[k] <= tier && answer.at < 0; ++k) {
      D.forEach(function (d, i) {
        if (d.t === tiers[k] && cap[i] >= pods) answer.fits.push(i);
      });
      if (answer.fits.length) answer.at = tiers[k];
    }
    D.forEach(function (d, i) {
      if (d.t <= tier && (answer.largest < 0 || cap[i] > cap[answer.largest])) answer.largest = i;
    });
    return answer;
  }
  function showGang(answer) {
    gangCap = answer;
    gDomains.textContent = '';
    ovBlocks.forEach(function (pair) { pair[0].classList.remove('fit'); });
    var where = new Array(D.length).fill(0);
    answer.fits.forEach(function (i) { for (var j = i; j >= 0; j = D[j].p) ++where[j]; });
    ovBlocks.forEach(function (pair) { if (where[pair[1]]) pair[0].classList.add('fit'); });
    var gang = answer.pods + ' x ' + plural(answer.gpus, 'GPU', 'GPUs');
    var text;
    if (answer.at >= 0) {
      text = 'The gang (' + gang + ') fits: inside one domain of tier ' + answer.at + ', ' +
          plural(answer.fits.length, 'domain has', 'domains have') + ' room for it (marked)';
    } else {
      text = 'The gang (' + gang + ') does not fit: no domain at tier <= ' + answer.tier + ' holds ' +
          answer.pods + ' pods' + (answer.largest >= 0 ? '; the largest, ' + D[answer.largest].n + ', holds ' +
          answer.cap[answer.largest] : '');
    }
    gAnswer.textContent = text + '.';
    gAnswer.setAttribute('data-fit', answer.at >= 0 ? 'true' : 'false');
    gAnswer.setAttribute('data-tier', String(answer.at));
    gAnswer.setAttribute('data-count', String(answer.fits.length));
    answer.fits.slice(0, GANG_LIST_LIMIT).forEach(function (i) {
      var li = el('li');
      li.appendChild(button('hitlink', D[i].n, function () { openInList(i); }));
      li.setAttribute('data-fits', D[i].n);
      gDomains.appendChild(li);
    });
    if (answer.fits.length > GANG_LIST_LIMIT) {
      gDomains.appendChild(el('li', null, 'and ' + (answer.fits.length - GANG_LIST_LIMIT) + ' more'));
    }
  }
  function whole(text, lo, hi) {
    var v = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
    return v >= lo && v <= hi ? v : NaN;
  }
  function runGang() {
    var pods = whole(gPods.value, 1, 1000000), gpus = whole(gGpus.value, 1, 1024), tier = Number(gTier.value);
    if (isNaN(pods) || isNaN(gpus) || !tiers.length) {
      gangCap = null;
      gAnswer.textContent = 'Give the pods (1 to 1000000) and the GPUs of each pod (1 to 1024).';
      gAnswer.removeAttribute('data-fit');
      return null;
    }
    var answer = gangAnswer(pods, gpus, tier);
    showGang(answer);
    return answer;
  }
  function clearGang() {
    gangCap = null;
    gDomains.textContent = '';
    gAnswer.textContent = '';
    gAnswer.removeAttribute('data-fit');
    ovBlocks.forEach(function (pair) { pair[0].classList.remove('fit'); });
  }
  document.getElementById('gang-go').addEventListener('click', runGang);
  document.getElementById('gang-clear').addEventListener('click', clearGang);
  [gPods, gGpus].forEach(function (input) {
    input.addEventListener('keydown', function (e) { if (e.key === 'Enter') runGang(); });
  });
  // #gang=PxG@T;PxG@T...: each gang is put into the box in turn and its answer kept in a log
  // (the last one stays shown), so that one opening answers many.
  function gangsFromHash(spec) {
    var log = document.getElementById('gang-log');
    spec.split(';').slice(0, 200).forEach(function (one) {
      var m = /^(\d+)x(\d+)(?:@(\d+))?$/.exec(one.trim());
      var li = el('li');
      li.setAttribute('data-gang', one.trim());
      if (!m) { li.setAttribute('data-fit', 'invalid'); log.appendChild(li); return; }
      gPods.value = m[1];
      gGpus.value = m[2];
      gTier.value = m[3] !== undefined ? m[3] : String(tiers[tiers.length - 1]);
      var answer = tiers.indexOf(Number(gTier.value)) >= 0 ? runGang() : null;
      if (!answer) { li.setAttribute('data-fit', 'invalid'); log.appendChild(li); return; }
      li.setAttribute('data-fit', answer.at >= 0 ? 'true' : 'false');
      li.setAttribute('data-tier', String(answer.at));
      li.setAttribute('data-count', String(answer.fits.length));
      li.textContent = answer.fits.slice(0, GANG_LIST_LIMIT).map(function (i) { return D[i].n; }).join(' ');
      log.appendChild(li);
    });
  }
  if (!data.coloured) {
    document.getElementById('gang').hidden = true;
    gAnswer.textContent = 'Without GPU data (give --nodes and --pods, or --assume-gpus-per-node) the page cannot say where a gang fits.';
  }

  var summary = D.length + ' domains in ' + plural(data.tiers, 'tier', 'tiers') + ', ' +
      plural(data.nodeCount, 'node', 'nodes');
  if (data.coloured) summary += ', GPUs ' + data.gpus.used + '/' + data.gpus.allocatable + ' used';
  if (data.degraded) summary += ', ' + data.degraded + ' degraded';
  if (data.unavailable) summary += ', ' + data.unavailable + ' cordoned or NotReady';
  document.getElementById('summary').textContent = summary + '.';
  if (!D.length) tree.appendChild(el('p', null, 'The tree is empty.'));
  data.roots.forEach(function (i) { tree.appendChild(domainEl(i)); });
  drawOverview();
  freeBlocks();
  openToFit();

  var hash = '';
  try { hash = decodeURIComponent(location.hash.slice(1)); } catch (e) { hash = ''; }
  var m = /^expand=(\d+)$/.exec(hash);
  // A fragment that asks for the list shows the list; #gang= fills the gang box.
  if (hash === 'expand=all') {
    expandAll();
    listTitle.scrollIntoView();
  } else if (m) {
    collapseAll();
    for (var t = 0; t < Number(m[1]); ++t) expandTier();
    listTitle.scrollIntoView();
  } else if (hash.indexOf('search=') === 0) {
    search.value = hash.slice(7);
    find(search.value);
    if (hits.length) go(hits[0]);
  } else if (hash.indexOf('gang=') === 0 && data.coloured) {
    gangsFromHash(hash.slice(5));
  }
  // How long the page took to open, layout included: from the start of navigation to here.
  void ovMap.getBoundingClientRect().height;
  body.setAttribute('data-open-ms', String(Math.round(performance.now())));
  window.addEventListener('load', function () {
    body.setAttribute('data-load-ms', String(Math.round(performance.now())));
  });
  body.setAttribute('data-state', 'ready');
})();
)JS";

// The overview above the list: the gang box, the map of the top tiers, the largest free blocks.
constexpr std::string_view kOverview = R"HTML(<section id="overview" aria-label="Overview">
<h2>Overview</h2>
<div id="gang" role="group" aria-label="Where does a gang fit">
<span>Gang:</span>
<input id="gang-pods" type="text" inputmode="numeric" placeholder="pods" aria-label="pods" autocomplete="off">
<span>pods x</span>
<input id="gang-gpus" type="text" inputmode="numeric" placeholder="GPUs" aria-label="GPUs per pod" autocomplete="off">
<span>GPUs per pod, all inside one domain of tier &lt;=</span>
<select id="gang-tier" aria-label="highest tier allowed"></select>
<button id="gang-go" type="button">Mark where it fits</button>
<button id="gang-clear" type="button">Clear</button>
</div>
<p id="gang-answer" role="status"></p>
<ul id="gang-domains"></ul>
<ol id="gang-log" hidden></ol>
<p id="ov-note"></p>
<div id="ov-legend"><span>Idle nodes:</span>
<span><span class="blk i4"></span> 75% or more</span>
<span><span class="blk i3"></span> 50% to 75%</span>
<span><span class="blk i2"></span> 25% to 50%</span>
<span><span class="blk i1"></span> under 25%</span>
<span><span class="blk i0"></span> none</span>
<span><span class="blk iz"></span> no GPUs / unknown</span>
<span><span class="blk i4 fit"></span> the gang fits in it</span>
</div>
<div id="free"><span>Largest free block per tier:</span><ul id="free-blocks"></ul></div>
<div id="ov-map"></div>
</section>
)HTML";

}  // namespace

std::string render_capacity_html(const Tree& tree, const GpuUsage& usage,
                                 const CapacityHtmlOptions& options) {
  const json data = page_data(tree, usage, options);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the page is whole as it is (clusters are often offline).
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"hypertopo\">\n";
  out += "<title>" + escape_html(options.title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n";
  out += "</head>\n<body data-state=\"loading\">\n<header>\n<h1>" + escape_html(options.title) + "</h1>\n";
  if (!options.subtitle.empty()) out += "<p class=\"sub\">" + escape_html(options.subtitle) + "</p>\n";
  out +=
      "<p id=\"summary\"></p>\n<div id=\"controls\">\n"
      "<input id=\"search\" type=\"search\" placeholder=\"Find a node or domain\" aria-label=\"Find a node "
      "or "
      "domain\" autocomplete=\"off\">\n"
      "<button id=\"expand\" type=\"button\">Expand a tier</button>\n"
      "<button id=\"collapse\" type=\"button\">Collapse</button>\n"
      "<button id=\"expand-all\" type=\"button\">Expand all</button>\n</div>\n<div id=\"legend\">\n";
  const bool coloured = !usage.empty();
  if (coloured) {
    out += "<span>GPUs in use:</span>\n";
    const std::pair<const char*, const char*> keys[] = {{"under 25%", "#93c47d"},
                                                        {"25% to 75%", "#ffd966"},
                                                        {"75% to 99%", "#f6b26b"},
                                                        {"full", "#e06666"},
                                                        {"no GPUs / unknown", "#d9d9d9"}};
    for (const auto& [text, colour] : keys) {
      out += "<span class=\"box legend-gpu\" style=\"background:" + std::string(colour) + "\">" + text +
             "</span>\n";
    }
  }
  // The swatch is drawn as the degraded boxes are: the same class, so the same frame, and the
  // warning fill only where the boxes have it (no GPU data).
  out += std::string("<span class=\"box degraded legend-degraded\"") +
         (coloured ? " style=\"background:#ffffff\"" : "") +
         ">degraded links or uplinks (FabricDegraded)</span>\n"
         "<span class=\"node bad\">node with a bad own link</span>\n";
  if (!options.unavailable_nodes.empty()) out += "<span class=\"node off\">cordoned or NotReady</span>\n";
  out += "</div>\n</header>\n<ul id=\"results\" hidden></ul>\n";
  out += kOverview;
  out += "<h2 id=\"list-title\">All domains</h2>\n<main id=\"tree\" role=\"tree\"></main>\n";
  out +=
      "<noscript><p>This page draws the tree with JavaScript; hypertopo discover -o tree prints it as "
      "text.</p></noscript>\n";
  out += "<script type=\"application/json\" id=\"hypertopo-data\">" + script_safe_json(data) + "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace hypertopo::topology::exporters
