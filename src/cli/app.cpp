// The common main of rltune and rltune-train: parse, set up logging and policies, run, map errors to
// exit codes (2 = bad input, 1 = internal error).
#include <fmt/format.h>

#include <iostream>
#include <stdexcept>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"

namespace rltune::cli {

CLI::Validator number_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "not a number: " + text;
        } catch (const std::out_of_range&) {
          return fmt::format("{} is out of range ({} to {})", text, min, max);
        } catch (const std::exception&) {
          return "not a number: " + text;
        }
        if (!(v >= min && v <= max)) return fmt::format("{} is out of range ({} to {})", text, min, max);
        return "";
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

int run_app(int argc, char** argv, const std::vector<Command (*)(CLI::App&)>& adds) {
  CLI::App app{"rltune: schedule deep-learning jobs on heterogeneous GPU clusters, by trace-driven simulation", "rltune"};
  app.set_version_flag("--version", std::string("rltune ") + RLTUNE_VERSION);
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  std::vector<Command> commands;
  for (auto add : adds) commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    set_log_level(log_level);
    policy::register_builtins();
    rl::register_rl_policy();
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

}  // namespace rltune::cli
