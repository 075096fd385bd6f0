#pragma once
// Output files of DESIGN.md section 3: jobs.csv and summary.json.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/file.h"  // write_file
#include "metrics/metrics.h"

namespace rltune::report {

using rltune::write_file;

using Json = nlohmann::ordered_json;

// jobs.csv: header window,job_id,pool,num_gpus,submit_time,start_time,end_time,wait_s,jct_s,bsld,
// placement,status,reason; one row per job of every run; empty cells for rejected jobs' times.
void write_jobs_csv(std::ostream& out, const std::vector<const metrics::RunMetrics*>& runs);

// The summary keys in contract order.
Json to_json(const metrics::Summary& summary);

// {"windows": [{"window": W, ...summary}], "aggregate": {...summary}}; with `estimated` (runtimes were
// estimates, not the truth) also "runtime_estimates": how good they were.
Json summary_json(const std::vector<const metrics::RunMetrics*>& runs, bool estimated);

}  // namespace rltune::report
