// rltune-train: the commands that need LibTorch (`rltune train`, `rltune export`), in their own program
// so that the others start fast. rltune runs it for those commands.
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace rltune::cli;
  // `train --resume --out DIR` alone (or with --epochs, --threads, --quiet) takes the run's stored arguments.
  std::vector<std::string> args = resumed_train_arguments({argv, argv + argc});
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());
  return run_app(static_cast<int>(pointers.size()), pointers.data(), {add_train, add_export});
}
