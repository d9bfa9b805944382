// PyOr<T>: a value or the Python exception Socorro's code would raise on this
// input. Rules that raise leave the signature unchanged and add the note
// "<Rule>: Rule failed: <message>"; an IndexError/KeyError while building the
// frame list is caught by SignatureGenerationRule itself (the stack is then
// treated as empty). Internal to the signature stage.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace seismo::signature_internal {

struct PyError {
  bool lookup = false;  // IndexError/KeyError (caught while building the frame list)
  std::string message;

  static PyError Type(std::string m) { return {false, std::move(m)}; }
  static PyError Lookup(std::string m) { return {true, std::move(m)}; }
};

template <typename T>
class [[nodiscard]] PyOr {
 public:
  PyOr(T v) : v_(std::move(v)) {}         // NOLINT(google-explicit-constructor)
  PyOr(PyError e) : v_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const PyError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, PyError> v_;
};

}  // namespace seismo::signature_internal
