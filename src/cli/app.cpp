// The common main of rltune and rltune-train: parse, set up logging and policies, run, map errors to
// exit codes (2 = bad input, 1 = internal error).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "cli/commands.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/file.h"
#include "core/log.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"

#include <unistd.h>

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

CLI::Validator path_name() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "an empty name names no file or folder" : ""; },
                        "PATH");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (error == std::errc() && end == text.data() + text.size()) return "";
        return fmt::format("{} is not a whole number from 0 to {}", text, std::numeric_limits<std::uint64_t>::max());
      },
      "UINT");
}

namespace {

// Several ranks run the command together: only commands that spread their work over ranks, all started
// with the same arguments. Only rank 0 prints results and progress.
void join_ranks(const Comm& comm, const std::string& command, int argc, char** argv) {
  std::string arguments;
  for (int i = 1; i < argc; ++i) arguments += std::string(argv[i]) + '\n';
  const auto all = comm.all_gather(arguments);  // first: every rank gets here, whatever its command
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw RanksFailed(fmt::format("rank {} was started with other arguments than rank 0; every rank must run the same command", r), true);
  if (command != "train" && command != "experiment")
    throw RanksFailed(fmt::format("`{}` runs in one process: start it without mpirun (train and experiment spread over MPI ranks)",
                                  command), true);
  if (comm.rank() != 0) {
    std::cout.setstate(std::ios::badbit);  // discards its output
    set_log_level("error");
  }
}

}  // namespace

std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--log-level") ++i;
    else if (!a.starts_with("-")) return a;
  }
  return {};
}

void refuse_overwriting(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!out.empty() && !input.empty() && std::filesystem::equivalent(out, input, ec))
      throw InputError(fmt::format("{} {}: is {}, which writing would replace; choose another file", flag, out, input));
  }
}

namespace {

// That the folder `out` is one, or can be made, and can be written in: checked before the work, so that
// a long run does not end on "cannot create the directory".
void check_writable_folder(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::absolute(out, ec);
  if (ec) return;  // said when it is made
  for (fs::path at = target;; at = at.parent_path()) {
    const fs::file_status status = fs::status(at, ec);
    if (!fs::exists(status) && fs::is_symlink(fs::symlink_status(at, ec)))
      throw InputError(fmt::format("--out {}: {} is a link to nothing", out, at.string()));
    if (!fs::exists(status)) {
      if (at == at.root_path() || at.parent_path() == at) return;
      continue;
    }
    if (!fs::is_directory(status))
      throw InputError(fmt::format("--out {}: {} is a file, not a folder", out, at.string()));
    if (::access(at.c_str(), W_OK | X_OK) != 0)
      throw InputError(fmt::format("--out {}: cannot write in {}: {}", out, at.string(), std::generic_category().message(errno)));
    return;
  }
}

}  // namespace

void check_out_dir(const std::string& out, const std::string& command) {
  check_writable_folder(out);
  const auto config = read_file((std::filesystem::path(out) / "config.json").string());
  if (!config) return;
  const auto json = nlohmann::json::parse(*config, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())  // cut short, say: whose it was is unknown
    throw InputError(fmt::format("--out {}: its config.json is not JSON (cut short or edited); repair or remove it, or choose "
                                 "another folder",
                                 out));
  if (!json.is_object() || !json.contains("command") || json["command"] != command)
    throw InputError(fmt::format("--out {}: holds the results of another command (its config.json is not {}'s); choose "
                                 "another folder",
                                 out, command));
}

namespace {
// A result lost on its way out (`> file` on a full disk, a closed terminal) is a failure, not a
// success with nothing written: flushed and checked before the exit code is decided.
void check_stdout_written() {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed)
    throw InputError(fmt::format("cannot write the result to standard output{}",
                                 errno != 0 ? fmt::format(" ({})", std::generic_category().message(errno)) : ""));
}

// --help and --version, checked as a command's result is.
int exit_written(CLI::App& app, const CLI::Error& e) {
  const int code = app.exit(e);
  try {
    check_stdout_written();
  } catch (const InputError& error) {
    std::cerr << "rltune: error: " << error.what() << '\n';
    return 2;
  }
  return code;
}
}  // namespace

int run_app(int argc, char** argv, const std::vector<Command (*)(CLI::App&)>& adds) {
  CLI::App app{"rltune: schedule deep-learning jobs on heterogeneous GPU clusters, by trace-driven simulation", "rltune"};
  app.set_version_flag("--version", std::string("rltune ") + RLTUNE_VERSION);
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  std::vector<Command> commands;
  for (auto add : adds) commands.push_back(add(app));
  // CLI11 would say only "A subcommand is required" for a misspelt command.
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (const std::string_view word = command_word(argc, argv); !word.empty() && std::ranges::find(names, word) == names.end()) {
    std::cerr << fmt::format("rltune: error: unknown command '{}' (commands: {})\nRun with --help for more information.\n", word,
                             fmt::join(names, ", "));
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return exit_written(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return exit_written(app, e);
  } catch (const CLI::CallForVersion& e) {
    return exit_written(app, e);
  } catch (const CLI::ParseError& e) {  // as every other input error is said
    std::cerr << "rltune: error: " << e.what() << "\nRun with --help for more information.\n";
    return 2;
  }
  const Comm* comm = &single_process();
  try {
    set_log_level(log_level);
    policy::register_builtins();
    rl::register_rl_policy();
    for (const auto& command : commands)
      if (command.app->parsed()) {
        comm = &world();
        if (comm->size() > 1) join_ranks(*comm, command.app->get_name(), argc, argv);
        const int status = command.run();
        if (comm->rank() == 0) check_stdout_written();  // the other ranks discard theirs
        return status;
      }
  } catch (const RanksFailed& e) {  // every rank failed with it: rank 0 says why
    if (comm->rank() == 0) std::cerr << "rltune: " << (e.input ? "error: " : "internal error: ") << e.what() << '\n';
    return e.input ? 2 : 1;
  } catch (const std::exception& e) {
    const bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    const std::string rank = comm->size() > 1 ? fmt::format(" (rank {} of {})", comm->rank(), comm->size()) : "";
    std::cerr << "rltune: " << (input ? "error" : "internal error") << rank << ": " << e.what() << '\n';
    // The other ranks would wait for this one forever.
    if (comm->size() > 1) comm->abort(input ? 2 : 1);
    return input ? 2 : 1;
  }
  return 0;
}

}  // namespace rltune::cli
