// rltune: trace-driven simulation and scheduling of deep-learning jobs on heterogeneous GPU clusters.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "policy/registry.h"

int main(int argc, char** argv) {
  using namespace rltune;
  CLI::App app{"rltune: schedule deep-learning jobs on heterogeneous GPU clusters, by trace-driven simulation"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  std::vector<cli::Command> commands;
  for (auto add : {cli::add_simulate, cli::add_trace_stats, cli::add_policies, cli::add_generate, cli::add_convert,
                   cli::add_cluster_from})
    commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    set_log_level(log_level);
    policy::register_builtins();
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const InputError& e) {
    std::cerr << "rltune: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "rltune: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
