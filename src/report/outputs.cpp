#include "report/outputs.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/csv.h"
#include "core/error.h"
#include "sim/runtime_predictor.h"

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
  for (const metrics::MetricDef& m : metrics::summary_metrics()) {
    if (m.milp_only && !s.has_milp) continue;
    if (m.count) j[m.name] = s.*m.count;
    else j[m.name] = s.*m.real;
  }
  return j;
}

Json summary_json(const std::vector<const metrics::RunMetrics*>& runs, bool estimated) {
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
  if (estimated) {
    const metrics::EstimateAccuracy accuracy = metrics::estimate_accuracy(runs);
    out["runtime_estimates"] = {{"jobs", accuracy.jobs},
                                {"median_abs_log_ratio", accuracy.median_abs_log_ratio},
                                {"under_share", accuracy.under_share},
                                {"within_2x_share", accuracy.within_2x_share}};
    // Where predicted estimates came from (user+gpus+vc, user, requested, ...), as shares.
    std::size_t predicted = 0;
    for (const std::size_t n : accuracy.sources) predicted += n;
    if (predicted > 0) {
      Json from = Json::object();
      for (std::size_t s = 0; s < accuracy.sources.size(); ++s)
        if (accuracy.sources[s] > 0)
          from[sim::kEstimateSourceNames.name(static_cast<sim::EstimateSource>(s))] =
              static_cast<double>(accuracy.sources[s]) / static_cast<double>(predicted);
      out["runtime_estimates"]["estimated_from"] = from;
    }
  }
  return out;
}

}  // namespace rltune::report
