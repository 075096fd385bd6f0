#pragma once
// The advisor loop of `rltune slurm`: each cycle reads the cluster (sinfo/squeue --json), decides with
// the advisor (advisor.h) and applies the decision with scontrol, logging every step.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "slurm/advisor.h"

namespace rltune::slurm {

struct LoopOptions {
  double interval_s = 10;  // between the starts of cycles
  bool once = false;       // one cycle, then return
  bool dry_run = false;    // log the scontrol commands instead of running them
  std::string bin_dir;     // folder of sinfo, squeue and scontrol ("" = PATH)
  double timeout_s = 10;   // per Slurm command
  bool json_log = false;   // one JSON object per line instead of text
  // The NodeLists the advisor has set, kept in this file between runs ("" = in memory only): so that a
  // later run (the next --once, a restart) clears them when they no longer fit.
  std::string state_file;
};

// The state file's record; {} when the file does not exist. InputError naming the file when it is not a
// state file this version wrote (or a hand edit broke it).
Pins read_state(const std::string& path);
// The state file's text for `pins`.
std::string state_text(const Pins& pins);

// Runs cycles until SIGINT or SIGTERM (or one, with `once`), logging to `log`. Returns the exit status:
// 0, or 1 when the only cycle (`once`) was skipped because Slurm could not be read, a change failed or
// the state file could not be written. InputError before any cycle for a bad or locked state file, and
// for placement in one applied cycle without a state file (its NodeLists could never be cleared).
int run_advisor_loop(const AdvisorOptions& options, const LoopOptions& loop, std::ostream& log);

}  // namespace rltune::slurm
