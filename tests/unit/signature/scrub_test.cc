// Scrubbing rules (config/scrub/rules.txt): every case of tests/data/scrub/cases.txt, scrubbing
// twice changes nothing, the embedded rules are the file's, the guards change no answer, and
// every malformed rules file is refused with its line.
#include "seismo/signature/scrub.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace seismo {
namespace {

std::string ReadFile(const std::string& relative) {
  std::ifstream in(std::string(SEISMO_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  int line = 0;
  std::string in, out;
};

// "in <text>" followed by "out <text>"; '#' lines and blank lines between cases.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  std::istringstream text(ReadFile("tests/data/scrub/cases.txt"));
  int n = 0;
  for (std::string line; std::getline(text, line);) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("in ", 0) == 0) {
      cases.push_back({n, line.substr(3), ""});
    } else if (line.rfind("out ", 0) == 0 && !cases.empty() && cases.back().out.empty()) {
      cases.back().out = line.substr(4);
    } else {
      ADD_FAILURE() << "cases.txt:" << n << ": not a case line: " << line;
    }
  }
  return cases;
}

TEST(Scrubber, EveryCaseOfTheDataFile) {
  const std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 40u);
  for (const Case& c : cases) {
    std::string text = c.in;
    const bool changed = Scrubber::Default().Scrub(text);
    EXPECT_EQ(text, c.out) << "cases.txt:" << c.line;
    EXPECT_EQ(changed, c.in != c.out) << "cases.txt:" << c.line;
    // Scrubbing twice changes nothing.
    std::string again = text;
    EXPECT_FALSE(Scrubber::Default().Scrub(again)) << "cases.txt:" << c.line << ": " << again;
    EXPECT_EQ(again, text);
  }
}

TEST(Scrubber, TheEmbeddedRulesAreTheConfigFile) {
  auto parsed = Scrubber::Parse(ReadFile("config/scrub/rules.txt"), "rules.txt");
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ((*parsed)->rule_count(), Scrubber::Default().rule_count());
  EXPECT_GE(Scrubber::Default().rule_count(), 7u);
  std::string text = "see alice@example.com";
  EXPECT_TRUE((*parsed)->Scrub(text));
  EXPECT_EQ(text, "see <email>");
}

// A guard only spares searches: it must match every text its rule's pattern matches. The
// rules without their guards give the same answers as with them, on every case of the data
// file, on the texts a guard was written about, and on random texts made of what the rules'
// patterns look at (schemes next to "chrome" and "resource" in any case, "ſ", which folds to
// 's', separators, hosts, '@', drive letters, home directories).
TEST(Scrubber, TheRulesGiveTheSameAnswersWithoutTheirGuards) {
  std::string unguarded_text;
  std::istringstream rules(ReadFile("config/scrub/rules.txt"));
  size_t guards = 0;
  for (std::string line; std::getline(rules, line);) {
    const size_t at = line.find_first_not_of(' ');
    if (at != std::string::npos &&
        (line.compare(at, 6, "guard ") == 0 || line.compare(at, 11, "guard-like ") == 0)) {
      ++guards;
      continue;
    }
    unguarded_text += line + "\n";
  }
  ASSERT_GE(guards, 6u);
  auto unguarded = Scrubber::Parse(unguarded_text, "rules.txt");
  ASSERT_TRUE(unguarded) << unguarded.error().message();
  auto same = [&](const std::string& in) {
    std::string with = in, without = in;
    const bool a = Scrubber::Default().Scrub(with);
    const bool b = (*unguarded)->Scrub(without);
    EXPECT_EQ(with, without) << "in: " << in;
    EXPECT_EQ(a, b) << "in: " << in;
    return with == without && a == b;
  };
  for (const Case& c : Cases()) same(c.in);
  for (const char* in : {"xchrome://evil.example.com/a", "CHROME://x.example.com", "chrome://browser/a.js:1",
                         "+chrome://host.example/p", "1http://host.example/p", "reſource://host.example/p",
                         "a resource://gre/x.jsm http://1.2.3.4/p", "chrome://a.js chrome2://b.example/c",
                         "f@chrome://browser/content/x.js:12", "file:///home/alice/x", "(chrome:///p)",
                         "a@b.cd", "a@b-c.de", "x@y.", "C:/Users/alice/a.dll", "c:\\uſers\\bob\\x",
                         "D:\\Documents and Settings\\carol\\y", "C:/Program Files/x"}) {
    same(in);
  }
  const std::vector<std::string> tokens = {"chrome",    "CHROME",
                                           "Chrome",    "resource",
                                           "ReSoUrCe",  "reſource",
                                           "ſ",         "http",
                                           "file",      "x",
                                           "1",         "+",
                                           ".",         "-",
                                           "://",       ":///",
                                           ":/",        ":\\",
                                           ":",         "/",
                                           "\\",        "@",
                                           "Users",     "uſers",
                                           "USERS",     "Documents and Settings",
                                           "home/",     "C:",
                                           "a.b",       "example.com",
                                           "1.2.3.4",   "[::1]",
                                           "localhost", " ",
                                           ")",         "]",
                                           ":42",       "f",
                                           "<",         "é",
                                           "\xff"};
  std::mt19937 rng(7);
  for (int i = 0; i < 40'000; ++i) {
    std::string text;
    for (int n = 1 + static_cast<int>(rng() % 12); n > 0; --n) text += tokens[rng() % tokens.size()];
    if (!same(text)) break;  // one text is enough to see
  }
}

TEST(Scrubber, RulesRunInFileOrderEachOnTheResultOfTheOnesBefore) {
  auto s = Scrubber::Parse(
      "rule a\n  when @\n  match @+\n  replace /\nrule b\n  when /\n  match /\n  replace z\n", "t");
  ASSERT_TRUE(s) << s.error().message();
  std::string text = "a@@b @";
  EXPECT_TRUE((*s)->Scrub(text));
  EXPECT_EQ(text, "azb z");
  std::string untouched = "abc";  // no `when` literal: not looked at
  EXPECT_FALSE((*s)->Scrub(untouched));
}

TEST(Scrubber, TheKeyBytePreCheckFindsAKeyByteAtEveryPlaceOfEveryLength) {
  // Words of eight bytes, the last overlapping, a short text padded: every length up to five
  // words, a key byte at each place, and every other byte value, which must not count.
  auto s = Scrubber::Parse("rule a\n  when @\n  match @\n  replace _\n", "t");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_FALSE((*s)->MayChange(""));
  for (size_t n = 1; n <= 40; ++n) {
    for (size_t at = 0; at < n; ++at) {
      std::string text(n, 'a');
      text[at] = '@';
      EXPECT_TRUE((*s)->MayChange(text)) << n << " bytes, key at " << at;
    }
    std::string none(n, '\0');
    for (size_t i = 0; i < n; ++i) none[i] = static_cast<char>((i * 37 + n) % 256);
    for (char& c : none) c = c == '@' ? 'A' : c;
    EXPECT_FALSE((*s)->MayChange(none)) << n << " bytes without '@'";
  }
}

TEST(Scrubber, GuardLikeGivesARuleTheGuardOfTheEarlierRuleItNames) {
  // b's guard is a's: b looks only at text a's guard matches (made narrower than b's
  // pattern here, so that the guard shows).
  auto s = Scrubber::Parse(
      "rule a\n  when @x\n  guard ZZZ\n  match @x\n  replace A\n"
      "rule b\n  when @y\n  guard-like a\n  match @y\n  replace B\n",
      "t");
  ASSERT_TRUE(s) << s.error().message();
  std::string outside = "f @y", inside = "ZZZ @y";
  EXPECT_FALSE((*s)->Scrub(outside));
  EXPECT_EQ(outside, "f @y");
  EXPECT_TRUE((*s)->Scrub(inside));
  EXPECT_EQ(inside, "ZZZ B");
}

TEST(Scrubber, AMalformedRulesFileIsRefusedWithItsLine) {
  struct Bad {
    const char* text;
    const char* error;
  };
  for (const Bad& b : {
           Bad{"when @x\n", "t:1: `when` before the first `rule`"},
           Bad{"rule a\n  match x\n  replace y\n", "t:1: rule a needs `when` and `match` lines"},
           Bad{"rule a\n  when @x\n  replace y\n", "t:1: rule a needs `when` and `match` lines"},
           Bad{"rule a\n  when @x\n  match x\n", "t:1: rule a needs a `replace` line"},
           Bad{"rule a\n  when @x\n  match x\nrule b\n", "t:1: rule a needs a `replace` line"},
           Bad{"# c\nrule a\n  when @x\n  match (x\n  replace y\n",
               "t:2: rule a: the pattern does not compile"},
           Bad{"rule a\n  when @x\n  match x\n  match y\n", "t:4: expected"},
           Bad{"rule a\n  whence x\n", "t:2: expected"},
           Bad{"rule\n", "t:1: a rule needs a name"},
           Bad{"rule a\n  when @x\n  match x\n  replace y\nrule a\n", "t:5: a second rule named a"},
           Bad{"rule a\n  when data:\n", "t:2: `when data:`: a literal needs a byte seldom in frames"},
           Bad{"rule a\n  when @x\n  guard (x\n", "t:3: rule a: the guard does not compile"},
           Bad{"rule a\n  when @x\n  guard x\n  guard y\n", "t:4: expected"},
           Bad{"rule a\n  when @x\n  guard x\n  guard-like a\n", "t:4: expected"},
           Bad{"rule a\n  when @x\n  guard-like a\n",
               "t:3: rule a: `guard-like a` names no earlier rule with a guard"},
           Bad{"rule a\n  when @x\n  match x\n  replace y\nrule b\n  when @y\n  guard-like a\n",
               "t:7: rule b: `guard-like a` names no earlier rule with a guard"},
           Bad{"rule a\n  when @x\n  guard x\n  match x\n  replace y\nrule b\n  when @y\n  guard-like c\n",
               "t:8: rule b: `guard-like c` names no earlier rule with a guard"},
       }) {
    auto s = Scrubber::Parse(b.text, "t");
    ASSERT_FALSE(s) << b.text;
    EXPECT_NE(s.error().message().find(b.error), std::string::npos) << s.error().message();
  }
}

}  // namespace
}  // namespace seismo
