#pragma once
// Error types. InputError = the user's input is wrong (exit code 2). InvariantError = rltune is wrong.
#include <stdexcept>
#include <string>

#include "core/types.h"

namespace rltune {

// Bad input: names where (file, line, field) and what (value, expectation).
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  // "FILE:LINE: field 'F': value 'V' MESSAGE"; line <= 0 and empty field/value are left out.
  static InputError at(const std::string& file, long line, const std::string& field,
                       const std::string& value, const std::string& message);
};

// A broken invariant inside rltune (GPUs not conserved, time going backwards, ...). Never expected.
class InvariantError : public std::logic_error {
 public:
  explicit InvariantError(const std::string& message) : std::logic_error(message) {}
};

[[noreturn]] void invariant_failed(const char* condition, const std::string& message, const char* file,
                                   int line);

}  // namespace rltune

// Always-on invariant check (also in Release builds): throws InvariantError with context.
#define RLTUNE_CHECK(cond, message)                                             \
  do {                                                                          \
    if (!(cond)) ::rltune::invariant_failed(#cond, (message), __FILE__, __LINE__); \
  } while (false)
