// rltune: trace-driven simulation and scheduling of deep-learning jobs on heterogeneous GPU clusters.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string_view>

#include "cli/commands.h"

namespace {

// train and export run in rltune-train, the only program that links LibTorch (slow to start).
int run_learner(char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto learner = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "rltune-train";
  if (!std::filesystem::exists(learner)) {
    std::cerr << "rltune: error: `" << argv[1] << "` needs rltune-train beside rltune (" << learner.string()
              << "), built when LibTorch is installed: install libtorch-dev and rebuild (make build)\n";
    return 2;
  }
  execv(learner.c_str(), argv);
  std::cerr << "rltune: error: cannot run " << learner.string() << '\n';
  return 1;
}

rltune::cli::Command add_learner_commands(CLI::App& app) {
  // Listed in the help; their options are parsed by rltune-train.
  app.add_subcommand("train", "Train a PPO policy (see `rltune train --help`)")->allow_extras();
  return {app.add_subcommand("export", "Export a trained policy as TorchScript (see `rltune export --help`)")->allow_extras(),
          [] { return 0; }};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rltune::cli;
  const std::string_view command = command_word(argc, argv);
  if (command == "train" || command == "export") return run_learner(argv);
  return run_app(argc, argv, {add_simulate, add_evaluate, add_experiment, add_report, add_slurm, add_trace_stats, add_policies, add_generate, add_convert,
                              add_cluster_from, add_learner_commands});
}
