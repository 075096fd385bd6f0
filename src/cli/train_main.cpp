// rltune-train: the commands that need LibTorch (`rltune train`, `rltune export`), in their own program
// so that the others start fast. rltune runs it for those commands.
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace rltune::cli;
  return run_app(argc, argv, {add_train, add_export});
}
