// graphviz:FILE — a user topology read from a Graphviz DOT file (format and example:
// docs/topologies.md).
//
// The accepted subset of DOT: `[strict] graph [ID] { … }` holding node statements
// (`a [kind=switch]`), edge chains (`a -- b -- c [bandwidth="50GB/s"]`), `node [...]` /
// `edge [...]` defaults (applied to nodes and edges created after them), `graph [...]` and
// top-level `key=value` statements (ignored), several attribute lists per statement, `//`,
// `/* */` and line-initial `#` comments, and quoted ids with `\"` escapes, `\`-newline
// continuation and `+` concatenation. Rejected with a message: `digraph` and `->`, subgraphs,
// ports (`a:p`), HTML ids (`<…>`).
//
// Meaning: every node is a chip unless `kind` says otherwise; every edge is one full-duplex link
// (links 2j: first-named node → second, 2j+1: the reverse), in file order. Chips get node ids
// 0..chips−1 in order of first appearance, other nodes follow in order of first appearance.
// Parallel edges and self-loops are errors. Drawing attributes (label, shape, color, …) are
// ignored so that files written for Graphviz tools read as they are; any other attribute is an
// error, so a typo like `bandwith=` never silently falls back to the default.
//
// Why not Boost.Graph's read_graphviz (Boost.Graph is a dependency already, for routing): every
// problem here is one line naming the file, the line and the item, as all bad input in meshsim
// is. read_graphviz reports syntax errors as exceptions whose tokens carry no position in the
// file, so the line of a bad statement would be lost; it hands attributes to dynamic_properties
// as strings keyed by name, after which unit parsing (`50GB/s`), the drawing attributes to ignore
// and the typo check would still be done here per node and edge; and the meaning checks (chips
// numbered by first appearance before other nodes, no parallel edges or self-loops, links in
// file order) are most of this file and stay whichever parser reads the syntax. The lexer and
// parser below are the part the library would have replaced.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/params.h"
#include "network/topology/families.h"

namespace meshsim::network::internal {
namespace {

constexpr int64_t kMaxFileBytes = int64_t{64} << 20;
constexpr int kMaxNodes = 1 << 20;
constexpr int64_t kMaxEdges = int64_t{1} << 24;

constexpr const char* kNodeKinds = "chip, switch, pcie-switch, cpu, nic";

// Graphviz drawing attributes that carry no meaning here; accepted and ignored on nodes and edges.
const std::set<std::string>& DrawingAttributes() {
  static const auto* const kAttrs = new std::set<std::string>{
      "arrowhead",   "arrowsize", "arrowtail", "color",     "colorscheme", "comment",  "constraint",
      "dir",         "fillcolor", "fixedsize", "fontcolor", "fontname",    "fontsize", "group",
      "headlabel",   "height",    "id",        "label",     "len",         "minlen",   "penwidth",
      "peripheries", "pos",       "shape",     "style",     "taillabel",   "tooltip",  "URL",
      "weight",      "width",     "xlabel"};
  return *kAttrs;
}

// A human, single-line rendering of a user string for messages.
std::string Q(const std::string& s) { return absl::StrCat("'", absl::CHexEscape(s), "'"); }

struct Attr {
  std::string value;
  int line = 0;
};
using Attrs = std::map<std::string, Attr>;

struct ParsedNode {
  std::string name;
  int line = 0;  // First appearance.
  Attrs attrs;
};

struct ParsedEdge {
  int a = 0, b = 0;  // Indices into the parsed nodes.
  int line = 0;
  Attrs attrs;
};

enum class Tok { kId, kLBrace, kRBrace, kLBracket, kRBracket, kEq, kSemi, kComma, kEdge, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // kId: the id, unquoted; otherwise the punctuation.
  bool quoted = false;
  int line = 0;
};

class Parser {
 public:
  Parser(std::string prefix, const std::string& text) : prefix_(std::move(prefix)), text_(text) {}

  absl::Status Parse() { return ParseGraph(); }

  std::vector<ParsedNode>& nodes() { return nodes_; }
  std::vector<ParsedEdge>& edges() { return edges_; }

  // "--topology graphviz:PATH: line N: what".
  absl::Status Error(int line, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(prefix_, ": line ", line, ": ", what));
  }

 private:
  // ---- Lexer ----
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  static bool IdStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
  static bool IdChar(unsigned char c) { return IdStart(c) || std::isdigit(c); }

  absl::Status SkipSpaceAndComments() {
    bool line_start = pos_ == 0 || text_[pos_ - 1] == '\n';
    while (!AtEnd()) {
      const char c = Peek();
      if (c == '\n') {
        ++line_;
        ++pos_;
        line_start = true;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#' && line_start) {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == '/' && Peek(1) == '/') {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == '/' && Peek(1) == '*') {
        const int start = line_;
        pos_ += 2;
        while (!AtEnd() && !(Peek() == '*' && Peek(1) == '/')) {
          if (Peek() == '\n') ++line_;
          ++pos_;
        }
        if (AtEnd()) return Error(start, "unterminated /* comment; close it with */");
        pos_ += 2;
      } else {
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> LexQuoted() {
    const int start = line_;
    ++pos_;  // Opening quote.
    std::string out;
    while (true) {
      if (AtEnd()) return Error(start, "unterminated quoted string; close it with \"");
      const char c = Peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\' && Peek(1) == '"') {
        out.push_back('"');
        pos_ += 2;
      } else if (c == '\\' && Peek(1) == '\n') {
        ++line_;
        pos_ += 2;
      } else if (c == '\\' && Peek(1) == '\r' && Peek(2) == '\n') {
        ++line_;
        pos_ += 3;
      } else {
        if (c == '\n') ++line_;
        out.push_back(c);
        ++pos_;
      }
    }
  }

  // A quoted id at pos_ into `t`: "a" + "b" concatenates.
  absl::StatusOr<Token> LexQuotedId(Token t) {
    absl::StatusOr<std::string> s = LexQuoted();
    if (!s.ok()) return s.status();
    t.text = *std::move(s);
    t.quoted = true;
    while (true) {
      const size_t save_pos = pos_;
      const int save_line = line_;
      if (absl::Status st = SkipSpaceAndComments(); !st.ok()) return st;
      if (Peek() == '+') {
        ++pos_;
        if (absl::Status st = SkipSpaceAndComments(); !st.ok()) return st;
        if (Peek() != '"') return Error(line_, "'+' must be followed by a quoted string");
        absl::StatusOr<std::string> more = LexQuoted();
        if (!more.ok()) return more.status();
        t.text += *more;
      } else {
        pos_ = save_pos;
        line_ = save_line;
        break;
      }
    }
    return t;
  }

  // A numeral at pos_ ([-](digits[.digits] | .digits)) into `t`; one followed by a unit or an
  // exponent is an error that shows it quoted.
  absl::StatusOr<Token> LexNumeral(Token t) {
    const char c = Peek();
    const size_t start = pos_;
    if (c == '-') ++pos_;
    bool dot = false, digits = false;
    while (!AtEnd()) {
      const char d = Peek();
      if (std::isdigit(static_cast<unsigned char>(d))) {
        digits = true;
      } else if (d == '.' && !dot) {
        dot = true;
      } else {
        break;
      }
      ++pos_;
    }
    if (!digits) return Error(line_, "'.' is not a number; allowed: a numeral or a quoted id");
    const char after = Peek();
    if (IdStart(static_cast<unsigned char>(after)) || after == '/' || after == '.') {
      size_t end = pos_;
      while (end < text_.size() &&
             (IdChar(static_cast<unsigned char>(text_[end])) || text_[end] == '/' ||
              text_[end] == '.' || text_[end] == '+' || text_[end] == '-')) {
        ++end;
      }
      return Error(line_, absl::StrFormat("%s must be quoted: \"%s\" (a DOT numeral has no unit "
                                          "or exponent)",
                                          Q(text_.substr(start, end - start)),
                                          absl::CHexEscape(text_.substr(start, end - start))));
    }
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  absl::StatusOr<Token> Next() {
    if (has_peeked_) {
      has_peeked_ = false;
      return peeked_;
    }
    if (absl::Status s = SkipSpaceAndComments(); !s.ok()) return s;
    Token t;
    t.line = line_;
    if (AtEnd()) return t;
    const char c = Peek();
    const auto punct = [&](Tok kind, int len) {
      t.kind = kind;
      t.text = text_.substr(pos_, len);
      pos_ += len;
      return t;
    };
    switch (c) {
      case '{':
        return punct(Tok::kLBrace, 1);
      case '}':
        return punct(Tok::kRBrace, 1);
      case '[':
        return punct(Tok::kLBracket, 1);
      case ']':
        return punct(Tok::kRBracket, 1);
      case '=':
        return punct(Tok::kEq, 1);
      case ';':
        return punct(Tok::kSemi, 1);
      case ',':
        return punct(Tok::kComma, 1);
      default:
        break;
    }
    if (c == '-' && Peek(1) == '-') return punct(Tok::kEdge, 2);
    if (c == '-' && Peek(1) == '>') {
      return Error(line_,
                   "'->' is a directed edge; allowed: undirected 'a -- b' in a `graph` "
                   "(every edge is a full-duplex link)");
    }
    if (c == '<') return Error(line_, "HTML ids (<…>) are not supported; allowed: quoted \"ids\"");
    if (c == ':')
      return Error(line_, "ports (node:port) are not supported; allowed: plain node ids");
    t.kind = Tok::kId;
    if (c == '"') return LexQuotedId(std::move(t));
    if (IdStart(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      while (!AtEnd() && IdChar(static_cast<unsigned char>(Peek()))) ++pos_;
      t.text = text_.substr(start, pos_ - start);
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
        (c == '-' && (std::isdigit(static_cast<unsigned char>(Peek(1))) || Peek(1) == '.'))) {
      return LexNumeral(std::move(t));
    }
    const unsigned char u = static_cast<unsigned char>(c);
    return Error(line_, absl::StrFormat("unexpected character %s; allowed: ids, numerals, quoted "
                                        "strings, { } [ ] = ; , --",
                                        std::isprint(u) ? absl::StrCat("'", std::string(1, c), "'")
                                                        : absl::StrFormat("0x%02x", u)));
  }

  absl::StatusOr<Token> PeekToken() {
    if (!has_peeked_) {
      absl::StatusOr<Token> t = Next();
      if (!t.ok()) return t.status();
      peeked_ = *std::move(t);
      has_peeked_ = true;
    }
    return peeked_;
  }

  static bool IsKeyword(const Token& t, const char* kw) {
    return t.kind == Tok::kId && !t.quoted && absl::EqualsIgnoreCase(t.text, kw);
  }

  static std::string Describe(const Token& t) {
    if (t.kind == Tok::kEnd) return "end of file";
    if (t.kind == Tok::kId) return absl::StrCat("id ", Q(t.text));
    return absl::StrCat("'", t.text, "'");
  }

  absl::Status Expect(Tok kind, const char* what) {
    absl::StatusOr<Token> t = Next();
    if (!t.ok()) return t.status();
    if (t->kind != kind) {
      return Error(t->line, absl::StrFormat("expected %s, found %s", what, Describe(*t)));
    }
    return absl::OkStatus();
  }

  // ---- Grammar ----
  absl::Status ParseGraph() {
    absl::StatusOr<Token> t = Next();
    if (!t.ok()) return t.status();
    if (t->kind == Tok::kEnd) {
      return Error(t->line, "the file is empty; expected `graph { … }`");
    }
    if (IsKeyword(*t, "strict")) {
      t = Next();
      if (!t.ok()) return t.status();
    }
    if (IsKeyword(*t, "digraph")) {
      return Error(t->line,
                   "`digraph` is not supported; allowed: `graph` with `--` edges (every "
                   "edge is a full-duplex link)");
    }
    if (!IsKeyword(*t, "graph")) {
      return Error(t->line,
                   absl::StrFormat("expected `graph` (or `strict graph`), found %s", Describe(*t)));
    }
    absl::StatusOr<Token> name = PeekToken();
    if (!name.ok()) return name.status();
    if (name->kind == Tok::kId) (void)Next();
    if (absl::Status s = Expect(Tok::kLBrace, "'{'"); !s.ok()) return s;
    while (true) {
      absl::StatusOr<Token> head = PeekToken();
      if (!head.ok()) return head.status();
      if (head->kind == Tok::kRBrace) {
        (void)Next();
        break;
      }
      if (head->kind == Tok::kEnd) {
        return Error(head->line, "unexpected end of file; the graph's '{' is not closed with '}'");
      }
      if (absl::Status s = ParseStatement(); !s.ok()) return s;
    }
    absl::StatusOr<Token> rest = Next();
    if (!rest.ok()) return rest.status();
    if (rest->kind != Tok::kEnd) {
      return Error(rest->line, absl::StrFormat("unexpected %s after the graph's closing '}'; "
                                               "allowed: one graph per file",
                                               Describe(*rest)));
    }
    return absl::OkStatus();
  }

  absl::Status ParseStatement() {
    absl::StatusOr<Token> t = Next();
    if (!t.ok()) return t.status();
    if (t->kind == Tok::kSemi) return absl::OkStatus();
    if (t->kind == Tok::kLBrace || IsKeyword(*t, "subgraph")) {
      return Error(t->line,
                   "subgraphs are not supported; allowed: node, edge and attribute "
                   "statements (group hosts with the host= attribute)");
    }
    if (t->kind != Tok::kId) {
      return Error(t->line, absl::StrFormat("expected a statement (node, edge or attribute), "
                                            "found %s",
                                            Describe(*t)));
    }
    if (IsKeyword(*t, "node") || IsKeyword(*t, "edge") || IsKeyword(*t, "graph")) {
      return ParseDefaults(*t);
    }
    if (IsKeyword(*t, "strict") || IsKeyword(*t, "digraph")) {
      return Error(t->line,
                   absl::StrFormat("%s is a keyword; quote it to use it as a node id", Q(t->text)));
    }
    absl::StatusOr<Token> after = PeekToken();
    if (!after.ok()) return after.status();
    if (after->kind == Tok::kEq) return ParseGraphAttribute(*t);
    if (after->kind != Tok::kEdge) return ParseNodeStatement(*t);
    return ParseEdgeChain(*t);
  }

  // `node [...]`, `edge [...]` (defaults for what follows) or `graph [...]` (ignored) after its
  // keyword `t`.
  absl::Status ParseDefaults(const Token& t) {
    Attrs attrs;
    if (absl::Status s = ParseAttrLists(attrs, /*required=*/true); !s.ok()) return s;
    if (IsKeyword(t, "node")) {
      for (auto& [k, v] : attrs) {
        if (absl::Status s = CheckNodeKey(k, v.line); !s.ok()) return s;
        node_defaults_[k] = v;
      }
    } else if (IsKeyword(t, "edge")) {
      for (auto& [k, v] : attrs) {
        if (absl::Status s = CheckEdgeKey(k, v.line); !s.ok()) return s;
        edge_defaults_[k] = v;
      }
    }
    return absl::OkStatus();
  }

  // A graph attribute `t = value` (`rankdir=LR`): drawing only.
  absl::Status ParseGraphAttribute(const Token& t) {
    (void)Next();
    absl::StatusOr<Token> value = Next();
    if (!value.ok()) return value.status();
    if (value->kind != Tok::kId) {
      return Error(value->line, absl::StrFormat("expected a value after '%s =', found %s",
                                                absl::CHexEscape(t.text), Describe(*value)));
    }
    return absl::OkStatus();
  }

  // A node statement `t [attrs]`.
  absl::Status ParseNodeStatement(const Token& t) {
    absl::StatusOr<int> node = NodeIndex(t);
    if (!node.ok()) return node.status();
    Attrs attrs;
    if (absl::Status s = ParseAttrLists(attrs, /*required=*/false); !s.ok()) return s;
    for (auto& [k, v] : attrs) {
      if (absl::Status s = CheckNodeKey(k, v.line); !s.ok()) return s;
      nodes_[*node].attrs[k] = v;
    }
    return absl::OkStatus();
  }

  // An edge chain `t -- b -- c [attrs]`: one edge per `--`.
  absl::Status ParseEdgeChain(const Token& t) {
    std::vector<std::pair<int, int>> chain;  // Node index, line.
    absl::StatusOr<int> first = NodeIndex(t);
    if (!first.ok()) return first.status();
    chain.push_back({*first, t.line});
    while (true) {
      absl::StatusOr<Token> op = PeekToken();
      if (!op.ok()) return op.status();
      if (op->kind != Tok::kEdge) break;
      (void)Next();
      absl::StatusOr<Token> id = Next();
      if (!id.ok()) return id.status();
      if (id->kind == Tok::kLBrace || IsKeyword(*id, "subgraph")) {
        return Error(id->line, "edges to subgraphs are not supported; allowed: node ids");
      }
      if (id->kind != Tok::kId || IsKeyword(*id, "node") || IsKeyword(*id, "edge") ||
          IsKeyword(*id, "graph")) {
        return Error(id->line,
                     absl::StrFormat("expected a node id after '--', found %s", Describe(*id)));
      }
      absl::StatusOr<int> next = NodeIndex(*id);
      if (!next.ok()) return next.status();
      chain.push_back({*next, id->line});
    }
    Attrs attrs;
    if (absl::Status s = ParseAttrLists(attrs, /*required=*/false); !s.ok()) return s;
    for (auto& [k, v] : attrs) {
      if (absl::Status s = CheckEdgeKey(k, v.line); !s.ok()) return s;
    }
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      if (absl::Status s = AddEdge(chain[i].first, chain[i + 1].first, chain[i + 1].second, attrs);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // The edge a -- b of line `line`: no self-loop, no second edge between a pair, at most
  // kMaxEdges; the edge defaults, then `attrs`.
  absl::Status AddEdge(int a, int b, int line, const Attrs& attrs) {
    if (a == b) {
      return Error(line, absl::StrFormat("self-loop %s -- %s; allowed: links between two "
                                         "different nodes",
                                         Q(nodes_[a].name), Q(nodes_[b].name)));
    }
    const std::pair<int, int> key = std::minmax(a, b);
    if (auto [it, inserted] = edge_lines_.emplace(key, line); !inserted) {
      return Error(line, absl::StrFormat("duplicate link %s -- %s (first at line %d); allowed: "
                                         "one edge per node pair (give it the combined "
                                         "bandwidth)",
                                         Q(nodes_[a].name), Q(nodes_[b].name), it->second));
    }
    if (static_cast<int64_t>(edges_.size()) >= kMaxEdges) {
      return Error(
          line, absl::StrFormat("more than %d edges; allowed: at most %d", kMaxEdges, kMaxEdges));
    }
    ParsedEdge e{a, b, line, edge_defaults_};
    for (auto& [k, v] : attrs) e.attrs[k] = v;
    edges_.push_back(std::move(e));
    return absl::OkStatus();
  }

  // Zero or more (one or more if `required`) `[k=v, …]` lists.
  absl::Status ParseAttrLists(Attrs& attrs, bool required) {
    bool any = false;
    while (true) {
      absl::StatusOr<Token> t = PeekToken();
      if (!t.ok()) return t.status();
      if (t->kind != Tok::kLBracket) {
        if (required && !any) {
          return Error(t->line, absl::StrFormat("expected '[' after node/edge/graph, found %s",
                                                Describe(*t)));
        }
        return absl::OkStatus();
      }
      any = true;
      (void)Next();
      while (true) {
        absl::StatusOr<Token> key = Next();
        if (!key.ok()) return key.status();
        if (key->kind == Tok::kRBracket) break;
        if (key->kind == Tok::kSemi || key->kind == Tok::kComma) continue;
        if (key->kind != Tok::kId) {
          return Error(key->line, absl::StrFormat("expected an attribute name or ']', found %s",
                                                  Describe(*key)));
        }
        absl::StatusOr<Token> eq = PeekToken();
        if (!eq.ok()) return eq.status();
        if (eq->kind != Tok::kEq) {
          attrs[key->text] = Attr{"true", key->line};
          continue;
        }
        (void)Next();
        absl::StatusOr<Token> value = Next();
        if (!value.ok()) return value.status();
        if (value->kind != Tok::kId) {
          return Error(value->line, absl::StrFormat("expected a value after '%s =', found %s",
                                                    absl::CHexEscape(key->text), Describe(*value)));
        }
        attrs[key->text] = Attr{value->text, key->line};
      }
    }
  }

  absl::StatusOr<int> NodeIndex(const Token& t) {
    if (auto it = index_.find(t.text); it != index_.end()) return it->second;
    if (static_cast<int>(nodes_.size()) >= kMaxNodes) {
      return Error(
          t.line, absl::StrFormat("more than %d nodes; allowed: at most %d", kMaxNodes, kMaxNodes));
    }
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back(ParsedNode{t.text, t.line, node_defaults_});
    index_.emplace(t.text, id);
    return id;
  }

  absl::Status CheckNodeKey(const std::string& key, int line) const {
    if (key == "kind" || key == "host" || DrawingAttributes().count(key) > 0) {
      return absl::OkStatus();
    }
    if (key == "bandwidth" || key == "latency" || key == "class") {
      return Error(line, absl::StrFormat("'%s' is an edge attribute, not allowed on a node; "
                                         "node attributes: kind, host",
                                         key));
    }
    return Error(line, absl::StrFormat("unknown node attribute %s; allowed: kind, host (and "
                                       "Graphviz drawing attributes such as label, shape, color)",
                                       Q(key)));
  }

  absl::Status CheckEdgeKey(const std::string& key, int line) const {
    if (key == "bandwidth" || key == "latency" || key == "class" ||
        DrawingAttributes().count(key) > 0) {
      return absl::OkStatus();
    }
    if (key == "kind" || key == "host") {
      return Error(line, absl::StrFormat("'%s' is a node attribute, not allowed on an edge; "
                                         "edge attributes: bandwidth, latency, class",
                                         key));
    }
    return Error(line, absl::StrFormat("unknown edge attribute %s; allowed: bandwidth, latency, "
                                       "class (and Graphviz drawing attributes such as label, "
                                       "color)",
                                       Q(key)));
  }

  std::string prefix_;
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  bool has_peeked_ = false;
  Token peeked_;
  Attrs node_defaults_, edge_defaults_;
  std::vector<ParsedNode> nodes_;
  std::unordered_map<std::string, int> index_;
  std::vector<ParsedEdge> edges_;
  std::map<std::pair<int, int>, int> edge_lines_;  // Node pair → line of its edge.
};

absl::StatusOr<std::string> ReadFile(const std::string& prefix, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, ": no file given; allowed: graphviz:PATH naming a DOT file"));
  }
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ": cannot read the file (",
                                                   ec ? ec.message() : "no such file",
                                                   "); allowed: a readable Graphviz DOT file"));
  }
  if (std::filesystem::is_directory(st)) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, ": is a directory; allowed: a readable Graphviz DOT file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ": cannot read the file (",
                                                   std::strerror(errno),
                                                   "); allowed: a readable Graphviz DOT file"));
  }
  // Read in chunks, so that a special file (a pipe, /dev/zero) is bounded too.
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: the file is larger than %d bytes (64 MiB); allowed: at most 64 MiB",
                          prefix, kMaxFileBytes));
    }
  }
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, ": error while reading the file; allowed: a readable DOT file"));
  }
  return text;
}

// Each node's kind (the `kind` attribute; chip by default). Returns the number of chips.
absl::StatusOr<int> ReadNodeKinds(const Parser& parser, const std::vector<ParsedNode>& nodes,
                                  std::vector<NodeKind>& kind) {
  static const std::pair<const char*, NodeKind> kKinds[] = {{"chip", NodeKind::kChip},
                                                            {"switch", NodeKind::kSwitch},
                                                            {"pcie-switch", NodeKind::kPcieSwitch},
                                                            {"cpu", NodeKind::kCpu},
                                                            {"nic", NodeKind::kNic}};
  kind.assign(nodes.size(), NodeKind::kChip);
  int chips = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (auto it = nodes[i].attrs.find("kind"); it != nodes[i].attrs.end()) {
      bool found = false;
      for (const auto& [name, k] : kKinds) {
        if (it->second.value == name) {
          kind[i] = k;
          found = true;
        }
      }
      if (!found) {
        return parser.Error(it->second.line,
                            absl::StrFormat("node %s: kind %s is not allowed; allowed: %s",
                                            Q(nodes[i].name), Q(it->second.value), kNodeKinds));
      }
    }
    if (kind[i] == NodeKind::kChip) ++chips;
  }
  return chips;
}

// The file's chips against --chips.
absl::Status CheckChipCount(const std::string& prefix, size_t nodes, int chips, int wanted) {
  if (chips == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the graph has no chips (%d nodes, none of kind chip); allowed: at least one node "
        "with kind=chip (the default kind)",
        prefix, nodes));
  }
  if (chips != wanted) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the file has %d chips but --chips is %d; allowed: --chips equal to "
                        "the file's chip count",
                        prefix, chips, wanted));
  }
  return absl::OkStatus();
}

// Node ids: chips first, each group in order of first appearance.
std::vector<int> NumberNodes(const std::vector<NodeKind>& kind, int chips) {
  std::vector<int> id(kind.size());
  int next_chip = 0, next_other = chips;
  for (size_t i = 0; i < kind.size(); ++i) {
    id[i] = kind[i] == NodeKind::kChip ? next_chip++ : next_other++;
  }
  return id;
}

// Whether the chips have hosts: `host` must be on every chip or on none, and on chips only.
absl::StatusOr<bool> ChipsHaveHosts(const Parser& parser, const std::vector<ParsedNode>& nodes,
                                    const std::vector<NodeKind>& kind, int chips) {
  int with_host = 0;
  const ParsedNode* without_host = nullptr;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = nodes[i].attrs.find("host");
    if (kind[i] != NodeKind::kChip) {
      if (it != nodes[i].attrs.end()) {
        return parser.Error(it->second.line,
                            absl::StrFormat("node %s: host= is not allowed on a %s; allowed: on "
                                            "chips only",
                                            Q(nodes[i].name), ToString(kind[i])));
      }
      continue;
    }
    if (it != nodes[i].attrs.end()) {
      ++with_host;
    } else if (without_host == nullptr) {
      without_host = &nodes[i];
    }
  }
  if (with_host > 0 && with_host < chips) {
    return parser.Error(without_host->line,
                        absl::StrFormat("chip %s has no host= but %d other chips do; allowed: "
                                        "host= on every chip or on none (one host per chip)",
                                        Q(without_host->name), with_host));
  }
  return with_host > 0;
}

// g.host_of from the chips' `host` attributes (which every chip has): whole numbers 0..H-1, every
// host used.
absl::Status ReadHosts(const Parser& parser, const std::string& prefix,
                       const std::vector<ParsedNode>& nodes, const std::vector<NodeKind>& kind,
                       const std::vector<int>& id, int chips, FamilyGraph& g) {
  g.host_of.assign(chips, 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (kind[i] != NodeKind::kChip) continue;
    const Attr& a = nodes[i].attrs.at("host");
    int h = 0;
    const bool digits = !a.value.empty() && std::all_of(a.value.begin(), a.value.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (!digits || !absl::SimpleAtoi(a.value, &h) || h >= chips) {
      return parser.Error(a.line, absl::StrFormat("chip %s: host %s is not allowed; allowed: a "
                                                  "whole number 0..%d (hosts numbered from 0)",
                                                  Q(nodes[i].name), Q(a.value), chips - 1));
    }
    g.host_of[id[i]] = h;
  }
  const int hosts = *std::max_element(g.host_of.begin(), g.host_of.end()) + 1;
  std::vector<bool> used(hosts, false);
  for (int h : g.host_of) used[h] = true;
  for (int h = 0; h < hosts; ++h) {
    if (!used[h]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: host %d has no chip but host %d does; allowed: host ids 0..H-1 with every host "
          "used",
          prefix, h, hosts - 1));
    }
  }
  return absl::OkStatus();
}

// An edge's quantity attribute `key` in `unit`, if given (else `value` stays): finite and > 0,
// or ≥ 0 with `zero_allowed`. `allowed` describes the unit and an example for the error.
absl::Status ReadEdgeQuantity(const Parser& parser, const ParsedEdge& e, const std::string& where,
                              const char* key, core::Unit unit, bool zero_allowed,
                              const char* allowed, double& value) {
  auto it = e.attrs.find(key);
  if (it == e.attrs.end()) return absl::OkStatus();
  absl::StatusOr<double> v = core::ParseQuantity(key, it->second.value, unit);
  if (!v.ok()) {
    return parser.Error(it->second.line, absl::StrCat(where, ": ", v.status().message()));
  }
  if (!(zero_allowed ? *v >= 0 : *v > 0) || !std::isfinite(*v)) {
    return parser.Error(
        it->second.line,
        absl::StrFormat("%s: %s %s is not allowed; must be %s and finite (%s)", where, key,
                        Q(it->second.value), zero_allowed ? "≥ 0" : "> 0", allowed));
  }
  value = *v;
  return absl::OkStatus();
}

// One full-duplex link per edge, in file order, with its bandwidth, latency and class (the
// defaults of `p` where not given).
absl::Status AddEdgeLinks(const Parser& parser, const std::vector<ParsedNode>& nodes,
                          const std::vector<ParsedEdge>& edges, const std::vector<int>& id,
                          const TopologyParams& p, FamilyGraph& g) {
  g.links.reserve(2 * edges.size());
  for (const ParsedEdge& e : edges) {
    const std::string where =
        absl::StrFormat("edge %s -- %s", Q(nodes[e.a].name), Q(nodes[e.b].name));
    double bw = p.link_bandwidth_bytes_per_s, latency = p.link_latency_s;
    LinkClass cls = LinkClass::kGeneric;
    if (absl::Status s =
            ReadEdgeQuantity(parser, e, where, "bandwidth", core::Unit::kBytesPerSecond,
                             /*zero_allowed=*/false, "bytes/s per direction, e.g. \"50GB/s\"", bw);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ReadEdgeQuantity(parser, e, where, "latency", core::Unit::kSeconds,
                                          /*zero_allowed=*/true, "seconds, e.g. \"1us\"", latency);
        !s.ok()) {
      return s;
    }
    if (auto it = e.attrs.find("class"); it != e.attrs.end()) {
      std::optional<LinkClass> c = LinkClassFromString(it->second.value);
      if (!c) {
        return parser.Error(it->second.line,
                            absl::StrFormat("%s: class %s is not allowed; allowed: %s", where,
                                            Q(it->second.value), LinkClassNames()));
      }
      cls = *c;
    }
    g.AddDuplex(id[e.a], id[e.b], bw, latency, cls);
  }
  return absl::OkStatus();
}

// Every chip must reach chip 0 (links are full-duplex, so then every chip reaches every other).
absl::Status CheckChipsConnected(const std::string& prefix, const FamilyGraph& g, int chips) {
  std::vector<std::vector<int>> adjacent(g.num_nodes);
  for (size_t l = 0; l < g.links.size(); l += 2) {
    adjacent[g.links[l].src].push_back(g.links[l].dst);
    adjacent[g.links[l].dst].push_back(g.links[l].src);
  }
  std::vector<bool> seen(g.num_nodes, false);
  std::vector<int> frontier = {0};
  seen[0] = true;
  while (!frontier.empty()) {
    const int v = frontier.back();
    frontier.pop_back();
    for (int w : adjacent[v]) {
      if (!seen[w]) {
        seen[w] = true;
        frontier.push_back(w);
      }
    }
  }
  for (int c = 1; c < chips; ++c) {
    if (!seen[c]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the graph is disconnected: chip %s cannot reach chip %s; allowed: a graph in "
          "which every chip reaches every other",
          prefix, Q(g.node_names[c]), Q(g.node_names[0])));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FamilyGraph> BuildGraphviz(const TopologyParams& p) {
  const std::string prefix =
      absl::StrCat("--topology graphviz:", absl::CHexEscape(p.graphviz_path));
  absl::StatusOr<std::string> text = ReadFile(prefix, p.graphviz_path);
  if (!text.ok()) return text.status();
  Parser parser(prefix, *text);
  if (absl::Status s = parser.Parse(); !s.ok()) return s;
  const std::vector<ParsedNode>& nodes = parser.nodes();

  std::vector<NodeKind> kind;
  absl::StatusOr<int> chips = ReadNodeKinds(parser, nodes, kind);
  if (!chips.ok()) return chips.status();
  if (absl::Status s = CheckChipCount(prefix, nodes.size(), *chips, p.chips); !s.ok()) return s;
  const std::vector<int> id = NumberNodes(kind, *chips);

  FamilyGraph g;
  g.weighted = true;
  g.node_kinds.resize(nodes.size());
  g.node_names.resize(nodes.size());
  g.num_nodes = static_cast<int>(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    g.node_kinds[id[i]] = kind[i];
    g.node_names[id[i]] = nodes[i].name;
  }
  absl::StatusOr<bool> hosts = ChipsHaveHosts(parser, nodes, kind, *chips);
  if (!hosts.ok()) return hosts.status();
  if (*hosts) {
    if (absl::Status s = ReadHosts(parser, prefix, nodes, kind, id, *chips, g); !s.ok()) return s;
  }
  if (absl::Status s = AddEdgeLinks(parser, nodes, parser.edges(), id, p, g); !s.ok()) return s;
  if (absl::Status s = CheckChipsConnected(prefix, g, *chips); !s.ok()) return s;
  return g;
}

}  // namespace meshsim::network::internal
