#include "signature/py_json.h"

#include <cstdio>
#include <cstdlib>

#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

constexpr int kMaxDepth = 500;

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  std::optional<PyJson> Document(PyJsonError* error) {
    SkipWs();
    std::optional<PyJson> v = Value(0);
    if (v) {
      SkipWs();
      if (pos_ != s_.size()) v.reset();
    }
    *error = v ? PyJsonError::kNone : (too_deep_ ? PyJsonError::kTooDeep : PyJsonError::kSyntax);
    return v;
  }

 private:
  void SkipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(std::string_view word) {
    if (s_.compare(pos_, word.size(), word) != 0) return false;
    pos_ += word.size();
    return true;
  }

  std::optional<PyJson> Value(int depth) {
    if (depth > kMaxDepth) {
      too_deep_ = true;
      return std::nullopt;
    }
    if (pos_ >= s_.size()) return std::nullopt;
    PyJson v;
    char c = s_[pos_];
    if (c == '{') return Object(depth);
    if (c == '[') return Array(depth);
    if (c == '"') {
      std::optional<std::string> str = String();
      if (!str) return std::nullopt;
      v.kind = PyJson::Kind::kString;
      v.text = std::move(*str);
      return v;
    }
    if (Eat("null")) return v;
    if (Eat("true") || Eat("false")) {
      v.kind = PyJson::Kind::kBool;
      v.boolean = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
      return v;
    }
    if (Eat("NaN")) return Float("nan");
    if (Eat("Infinity")) return Float("inf");
    if (Eat("-Infinity")) return Float("-inf");
    return Number();
  }

  static PyJson Float(std::string text) {
    PyJson v;
    v.kind = PyJson::Kind::kFloat;
    v.text = std::move(text);
    return v;
  }

  std::optional<PyJson> Number() {
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    auto digit = [&] { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; };
    if (!digit()) return std::nullopt;
    if (s_[pos_] == '0') {
      ++pos_;
    } else {
      while (digit()) ++pos_;
    }
    bool is_float = false;
    if (pos_ < s_.size() && s_[pos_] == '.' && pos_ + 1 < s_.size() && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9') {
      is_float = true;
      ++pos_;
      while (digit()) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t save = pos_++;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digit()) {
        is_float = true;
        while (digit()) ++pos_;
      } else {
        pos_ = save;  // Python stops the number before a bare 'e'
      }
    }
    std::string text(s_.substr(start, pos_ - start));
    PyJson v;
    if (is_float) {
      return Float(PyFloatRepr(std::strtod(text.c_str(), nullptr)));
    }
    v.kind = PyJson::Kind::kInt;
    bool negative = text[0] == '-';
    std::string digits = negative ? text.substr(1) : text;
    v.text = (negative && digits != "0") ? "-" + digits : digits;
    return v;
  }

  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::optional<uint32_t> Hex4() {
    if (pos_ + 4 > s_.size()) return std::nullopt;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      int h = HexValue(s_[pos_ + static_cast<size_t>(i)]);
      if (h < 0) return std::nullopt;
      v = v * 16 + static_cast<uint32_t>(h);
    }
    pos_ += 4;
    return v;
  }

  std::optional<std::string> String() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;  // strict mode
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return std::nullopt;
      char e = s_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          std::optional<uint32_t> cp = Hex4();
          if (!cp) return std::nullopt;
          if (*cp >= 0xD800 && *cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            size_t save = pos_;
            pos_ += 2;
            std::optional<uint32_t> low = Hex4();
            if (low && *low >= 0xDC00 && *low < 0xE000) {
              *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
            } else {
              pos_ = save;
            }
          }
          AppendUtf8(out, *cp);
          break;
        }
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::optional<PyJson> Array(int depth) {
    ++pos_;
    PyJson v;
    v.kind = PyJson::Kind::kArray;
    SkipWs();
    if (Eat("]")) return v;
    while (true) {
      SkipWs();
      std::optional<PyJson> item = Value(depth + 1);
      if (!item) return std::nullopt;
      v.items.push_back(std::move(*item));
      SkipWs();
      if (Eat("]")) return v;
      if (!Eat(",")) return std::nullopt;
    }
  }

  std::optional<PyJson> Object(int depth) {
    ++pos_;
    PyJson v;
    v.kind = PyJson::Kind::kObject;
    SkipWs();
    if (Eat("}")) return v;
    while (true) {
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != '"') return std::nullopt;
      std::optional<std::string> key = String();
      if (!key) return std::nullopt;
      SkipWs();
      if (!Eat(":")) return std::nullopt;
      SkipWs();
      std::optional<PyJson> item = Value(depth + 1);
      if (!item) return std::nullopt;
      bool replaced = false;
      for (size_t i = 0; i < v.keys.size(); ++i) {
        if (v.keys[i] == *key) {
          v.values[i] = std::move(*item);
          replaced = true;
          break;
        }
      }
      if (!replaced) {
        v.keys.push_back(std::move(*key));
        v.values.push_back(std::move(*item));
      }
      SkipWs();
      if (Eat("}")) return v;
      if (!Eat(",")) return std::nullopt;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool too_deep_ = false;
};

void AppendRepr(std::string& out, const PyJson& v) {
  switch (v.kind) {
    case PyJson::Kind::kString:
      AppendPyStrRepr(out, v.text);
      return;
    case PyJson::Kind::kArray:
      out.push_back('[');
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += ", ";
        AppendRepr(out, v.items[i]);
      }
      out.push_back(']');
      return;
    case PyJson::Kind::kObject:
      out.push_back('{');
      for (size_t i = 0; i < v.keys.size(); ++i) {
        if (i > 0) out += ", ";
        AppendPyStrRepr(out, v.keys[i]);
        out += ": ";
        AppendRepr(out, v.values[i]);
      }
      out.push_back('}');
      return;
    default:
      out += PyJsonStr(v);
  }
}

}  // namespace

const PyJson* PyJson::Find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &values[i];
  }
  return nullptr;
}

std::optional<PyJson> PyJsonLoads(std::string_view text, PyJsonError* error) {
  // json.loads also skips surrounding whitespace; str.strip-style is not used.
  return Reader(text).Document(error);
}

std::string PyJsonStr(const PyJson& v) {
  switch (v.kind) {
    case PyJson::Kind::kNull: return "None";
    case PyJson::Kind::kBool: return v.boolean ? "True" : "False";
    case PyJson::Kind::kInt:
    case PyJson::Kind::kFloat:
    case PyJson::Kind::kString: return v.text;
    default: {
      std::string out;
      AppendRepr(out, v);
      return out;
    }
  }
}

}  // namespace seismo::signature_internal
