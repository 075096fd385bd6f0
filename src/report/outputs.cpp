#include "report/outputs.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/csv.h"
#include "core/error.h"

namespace rltune::report {

void write_jobs_csv(std::ostream& out, const std::vector<const metrics::RunMetrics*>& runs) {
  out << "window,job_id,pool,num_gpus,submit_time,start_time,end_time,wait_s,jct_s,bsld,placement,status,reason\n";
  for (const auto* run : runs)
    for (const auto& j : run->jobs) {
      csv::write_field(out, run->window);
      out << ',';
      csv::write_field(out, j.job_id);
      out << ',';
      csv::write_field(out, j.pool);
      out << ',' << j.gpus << ',' << j.submit << ',';
      if (j.completed())
        out << j.start << ',' << j.end << ',' << j.wait() << ',' << j.jct() << ',' << csv::format_number(j.bsld()) << ',';
      else
        out << ",,,,,";
      csv::write_field(out, j.placement);
      out << ',' << j.status << ',';
      csv::write_field(out, j.reason);
      out << '\n';
    }
}

Json to_json(const metrics::Summary& s) {
  Json j;
  j["jobs_total"] = s.jobs_total;
  j["jobs_completed"] = s.jobs_completed;
  j["jobs_rejected"] = s.jobs_rejected;
  j["avg_wait_s"] = s.avg_wait_s;
  j["p50_wait_s"] = s.p50_wait_s;
  j["p95_wait_s"] = s.p95_wait_s;
  j["p99_wait_s"] = s.p99_wait_s;
  j["avg_jct_s"] = s.avg_jct_s;
  j["p95_jct_s"] = s.p95_jct_s;
  j["avg_bsld"] = s.avg_bsld;
  j["p95_bsld"] = s.p95_bsld;
  j["gpu_utilization"] = s.gpu_utilization;
  j["makespan_s"] = s.makespan_s;
  j["avg_fragmentation"] = s.avg_fragmentation;
  j["decisions"] = s.decisions;
  j["sim_wall_s"] = s.sim_wall_s;
  j["decision_us_p50"] = s.decision_us_p50;
  j["decision_us_p99"] = s.decision_us_p99;
  if (s.has_milp) {
    j["milp_solves"] = s.milp_solves;
    j["milp_fallbacks"] = s.milp_fallbacks;
    j["milp_us_p50"] = s.milp_us_p50;
    j["milp_us_p99"] = s.milp_us_p99;
  }
  return j;
}

Json summary_json(const std::vector<const metrics::RunMetrics*>& runs) {
  Json out;
  out["windows"] = Json::array();
  for (const auto* run : runs) {
    Json w;
    w["window"] = run->window;
    const Json metrics = to_json(metrics::summarize(*run));
    for (auto it = metrics.begin(); it != metrics.end(); ++it) w[it.key()] = *it;
    out["windows"].push_back(std::move(w));
  }
  out["aggregate"] = to_json(metrics::summarize(runs));
  return out;
}


}  // namespace rltune::report
