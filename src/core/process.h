#pragma once
// Running another program and collecting what it prints, with a time limit (the Slurm advisor's sinfo,
// squeue and scontrol).
#include <string>
#include <vector>

namespace rltune {

struct ProcessOutput {
  int status = -1;  // exit status; -1 = killed at the time limit, killed by a signal, or could not run
  std::string out, err;
};

// Runs argv (argv[0] looked up in `bin_dir` when given, else on PATH) and waits at most `timeout_s`
// seconds; at the limit the program and every process it started are killed.
ProcessOutput run_process(const std::vector<std::string>& argv, const std::string& bin_dir, double timeout_s);

// argv as one line for people: "scontrol update JobId=12".
std::string command_line(const std::vector<std::string>& argv);

}  // namespace rltune
