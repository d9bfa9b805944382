// Python string semantics the signature code depends on.
#include <gtest/gtest.h>

#include "signature/py_json.h"
#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

TEST(PyTextTest, IntAcceptsWhatPythonIntAccepts) {
  EXPECT_EQ(PyIntFromText(" 42 "), 42);
  EXPECT_EQ(PyIntFromText("-7"), -7);
  EXPECT_EQ(PyIntFromText("+7"), 7);
  EXPECT_EQ(PyIntFromText("1_000"), 1000);
  EXPECT_EQ(PyIntFromText("\u0661\u0662"), 12);  // Arabic-Indic digits
  EXPECT_EQ(PyIntFromText("99999999999999999999999"), INT64_MAX);
  EXPECT_EQ(PyIntFromText(""), std::nullopt);
  EXPECT_EQ(PyIntFromText("1__0"), std::nullopt);
  EXPECT_EQ(PyIntFromText("_1"), std::nullopt);
  EXPECT_EQ(PyIntFromText("1_"), std::nullopt);
  EXPECT_EQ(PyIntFromText("1.0"), std::nullopt);
  EXPECT_EQ(PyIntFromText("0x10"), std::nullopt);
}

TEST(PyTextTest, HexNormalisationLikeHexOfIntBase16) {
  EXPECT_EQ(PyHexNormalize("0x0000000000032ec0"), "0x32ec0");
  EXPECT_EQ(PyHexNormalize("0X00AB"), "0xab");
  EXPECT_EQ(PyHexNormalize("00"), "0x0");
  EXPECT_EQ(PyHexNormalize("-0x1f"), "-0x1f");
  EXPECT_EQ(PyHexNormalize("0x_1f"), "0x1f");
  EXPECT_EQ(PyHexNormalize("0x"), std::nullopt);
  EXPECT_EQ(PyHexNormalize("junk"), std::nullopt);
  EXPECT_EQ(PyHexNormalize("0xffffffffffffffffffff"), "0xffffffffffffffffffff");
}

TEST(PyTextTest, FloatReprMatchesPython) {
  EXPECT_EQ(PyFloatRepr(1.0), "1.0");
  EXPECT_EQ(PyFloatRepr(0.1), "0.1");
  EXPECT_EQ(PyFloatRepr(2.5), "2.5");
  EXPECT_EQ(PyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PyFloatRepr(1.5e16), "1.5e+16");
  EXPECT_EQ(PyFloatRepr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(PyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatRepr(0.00001), "1e-05");
  EXPECT_EQ(PyFloatRepr(-0.0), "-0.0");
}

TEST(PyTextTest, StripUsesUnicodeWhitespace) {
  EXPECT_EQ(PyStrip("\u3000 a b\t\x1c"), "a b");
  EXPECT_EQ(PyRstrip(" a \u00a0"), " a");
}

TEST(PyTextTest, LowerHandlesNonAscii) {
  EXPECT_EQ(PyLower("ÀÉÎ.DLL"), "àéî.dll");
  EXPECT_EQ(PyLower("\u0130"), "i\u0307");
  EXPECT_EQ(PyLower("ПРИВЕТ"), "привет");
}

TEST(PyTextTest, SplitLinesKnowsPythonLineBreaks) {
  std::vector<std::string_view> lines = PySplitLines("a\r\nb\rc\x1e" "d\u2028e\n");
  EXPECT_EQ(lines, (std::vector<std::string_view>{"a", "b", "c", "d", "e"}));
}

TEST(PyTextTest, CodePointPrefixCountsCharactersNotBytes) {
  EXPECT_EQ(CodePointPrefix("ééé", 2), "éé");
  EXPECT_EQ(CodePointCount("aé"), 2u);
}

TEST(PyJsonTest, LoadsLikePython) {
  PyJsonError err;
  auto v = PyJsonLoads(R"j( {"a": 1, "a": 2, "b": [true, null, 1.0, "x'y"]} )j", &err);
  ASSERT_TRUE(v);
  EXPECT_EQ(PyJsonStr(*v->Find("a")), "2");
  EXPECT_EQ(PyJsonStr(*v->Find("b")), "[True, None, 1.0, \"x'y\"]");
  EXPECT_TRUE(PyJsonLoads("NaN", &err));
  EXPECT_FALSE(PyJsonLoads("{{{{", &err));
  EXPECT_EQ(err, PyJsonError::kSyntax);
  EXPECT_FALSE(PyJsonLoads("1.", &err));
  EXPECT_FALSE(PyJsonLoads(std::string(1000, '['), &err));
  EXPECT_EQ(err, PyJsonError::kTooDeep);
}

}  // namespace
}  // namespace seismo::signature_internal
