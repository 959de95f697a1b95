#include "base/python_json.h"

#include <catch2/catch.hpp>

namespace cpplaunch {

// Expected texts are what CPython 3.11's json.dumps / repr print for the same values.
TEST_CASE("PyJsonString escapes as json.dumps does", "[base][python_json]") {
  CHECK(PyJsonString("plain") == "\"plain\"");
  CHECK(PyJsonString("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(PyJsonString("l1\nl2\tx\r\b\f") == "\"l1\\nl2\\tx\\r\\b\\f\"");
  CHECK(PyJsonString(std::string("\x01\x7f", 2)) == "\"\\u0001\\u007f\"");
  CHECK(PyJsonString("caf\xc3\xa9") == "\"caf\\u00e9\"");
  CHECK(PyJsonString("\xe2\x82\xac") == "\"\\u20ac\"");
  CHECK(PyJsonString("\xf0\x9f\x98\x80") == "\"\\ud83d\\ude00\"");
  CHECK(PyJsonString("bad\xff") == "\"bad\\ufffd\"");
  CHECK(PyJsonString("cut\xe2\x82") == "\"cut\\ufffd\"");
}

TEST_CASE("PyFloatRepr writes repr(float)", "[base][python_json]") {
  CHECK(PyFloatRepr(3) == "3.0");
  CHECK(PyFloatRepr(0.1) == "0.1");
  CHECK(PyFloatRepr(-2.5) == "-2.5");
  CHECK(PyFloatRepr(1700000000.25) == "1700000000.25");
  CHECK(PyFloatRepr(1e-05) == "1e-05");
  CHECK(PyFloatRepr(0.0001) == "0.0001");
  CHECK(PyFloatRepr(1e16) == "1e+16");
  CHECK(PyFloatRepr(1.5e16) == "1.5e+16");
  CHECK(PyFloatRepr(123456789012345.0) == "123456789012345.0");
}

TEST_CASE("PyJsonObject joins members as json.dumps does", "[base][python_json]") {
  PyJsonObject object;
  object.Add("name", "x").Add("n", 3).AddNull("none").AddFloat("f", 0.5).AddRaw("o", "{}");
  CHECK(object.str() == R"({"name": "x", "n": 3, "none": null, "f": 0.5, "o": {}})");
  CHECK(PyJsonObject().str() == "{}");
}

}  // namespace cpplaunch
