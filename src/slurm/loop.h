#pragma once
// The advisor loop of `rltune slurm`: each cycle reads the cluster (sinfo/squeue --json), decides with
// the advisor (advisor.h) and applies the decision with scontrol, logging every step.
#include <iosfwd>
#include <string>

#include "slurm/advisor.h"

namespace rltune::slurm {

struct LoopOptions {
  double interval_s = 10;  // between the starts of cycles
  bool once = false;       // one cycle, then return
  bool dry_run = false;    // log the scontrol commands instead of running them
  std::string bin_dir;     // folder of sinfo, squeue and scontrol ("" = PATH)
  double timeout_s = 10;   // per Slurm command
  bool json_log = false;   // one JSON object per line instead of text
};

// Runs cycles until SIGINT or SIGTERM (or one, with `once`), logging to `log`. Returns the exit status:
// 0, or 1 when the only cycle (`once`) was skipped because Slurm could not be read.
int run_advisor_loop(const AdvisorOptions& options, const LoopOptions& loop, std::ostream& log);

}  // namespace rltune::slurm
