#include "workload/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

#include "cluster/yaml_check.h"
#include "core/error.h"
#include "core/file.h"
#include "workload/presets.h"

namespace rltune::workload {

namespace {

constexpr double kMaxDurationS = 1e10;
constexpr int kMaxGpus = 1'000'000;

// Durations are interpolated in log space (they span seconds to months); 1 s floors the logarithm.
double log_of(double seconds) { return std::log(std::max(seconds, 1.0)); }

// Scales the weights to mean 1 (left alone when already so, so that a written model reads back exactly).
void normalise(std::array<double, 24>& weights) {
  const double mean = std::accumulate(weights.begin(), weights.end(), 0.0) / 24.0;
  if (std::fabs(mean - 1) < 1e-9) return;
  for (auto& w : weights) w = mean > 0 ? w / mean : 1.0;
}

std::vector<double> quantiles_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::vector<double> q(kQuantiles);
  for (int k = 0; k < kQuantiles; ++k) {
    const double pos = kQuantileProbabilities[k] * static_cast<double>(values.size() - 1);
    q[k] = values[static_cast<std::size_t>(std::llround(pos))];
  }
  return q;
}

}  // namespace

double duration_at(const SizeClass& size, double u) {
  u = std::clamp(u, 0.0, 1.0);
  const double* p = kQuantileProbabilities;
  const int i = std::min(static_cast<int>(std::upper_bound(p, p + kQuantiles, u) - p) - 1, kQuantiles - 2);
  const double f = (u - p[i]) / (p[i + 1] - p[i]), lo = size.duration_quantiles[i], hi = size.duration_quantiles[i + 1];
  if (lo < 1 || hi < 1) return lo + f * (hi - lo);  // below a second: linear (log would distort zeros)
  return std::exp(log_of(lo) + f * (log_of(hi) - log_of(lo)));
}

double mean_duration(const SizeClass& size) {
  constexpr int kSteps = 2000;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) sum += duration_at(size, (i + 0.5) / kSteps);
  return sum / kSteps;
}

WorkloadModel parse_model(const std::string& yaml, const std::string& file) {
  const YamlCheck check{file};
  const YAML::Node root = check.load(yaml);
  if (!root || root.IsNull()) throw InputError(file + ": the workload model is empty");
  if (!root.IsMap())  // a trace, say: only generate fits one
    throw InputError(fmt::format("{}: not a workload model (a YAML mapping); to work like a trace, fit a model to it first: "
                                 "rltune generate --like TRACE --save-model MODEL.yaml",
                                 file));
  check.only_keys(root, "", {"extends", "name", "source", "hourly_weights", "sizes", "max_overestimate", "estimate_round_s",
                             "users", "user_behaviour"});
  WorkloadModel m;
  m.hourly_weights.fill(1.0);
  // `extends: FAMILY`: that family with the keys given here replaced (one level: the family must not extend).
  if (const YAML::Node base = root["extends"]) {
    const std::string family = check.text(base, "extends");
    const auto& all = presets();
    const auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == family; });
    if (it == all.end()) check.fail(base, "extends", fmt::format("'{}' is not a workload family ({})", family, fmt::join(family_names(), ", ")));
    if (YAML::Load(it->yaml)["extends"]) check.fail(base, "extends", fmt::format("family {} itself extends another", family));
    m = parse_model(it->yaml, it->name);
  }
  m.name = root["name"] ? check.name(root["name"], "name") : file;
  if (root["source"]) m.source = check.text(root["source"], "source");
  else if (root["extends"]) m.source = fmt::format("{}, as changed by {}", m.source, file);  // not the family's alone
  if (const YAML::Node w = root["hourly_weights"]) {
    if (!w.IsSequence() || w.size() != 24) check.fail(w, "hourly_weights", "must be a list of 24 numbers");
    for (std::size_t h = 0; h < 24; ++h) m.hourly_weights[h] = check.number(w[h], fmt::format("hourly_weights[{}]", h), 0, 1e9);
    // Nor so near it that their mean rounds to 0 (5e-324 and zeros), which would flatten the cycle.
    if (std::accumulate(m.hourly_weights.begin(), m.hourly_weights.end(), 0.0) / 24 < 1e-12)
      check.fail(w, "hourly_weights", "must not all be zero (their mean must be at least 1e-12)");
  }
  normalise(m.hourly_weights);
  if (root["max_overestimate"]) m.max_overestimate = check.number(root["max_overestimate"], "max_overestimate", 1, 1000);
  if (root["estimate_round_s"]) m.estimate_round_s = check.integer(root["estimate_round_s"], "estimate_round_s", 1, 86400);
  if (root["users"]) m.users = static_cast<int>(check.integer(root["users"], "users", 1, 1'000'000));
  if (const YAML::Node b = root["user_behaviour"]) {
    check.only_keys(b, "user_behaviour", {"templates", "repeat", "activity_skew", "duration_correlation"});
    UserBehaviour& u = m.user_behaviour;
    if (!b["templates"]) check.fail(b, "user_behaviour.templates", "is required (0 turns the behaviour off)");
    u.templates = static_cast<int>(check.integer(b["templates"], "user_behaviour.templates", 0, 1000));
    if (b["repeat"]) u.repeat = check.number(b["repeat"], "user_behaviour.repeat", 0, 1);
    if (b["activity_skew"]) u.activity_skew = check.number(b["activity_skew"], "user_behaviour.activity_skew", 0, 10);
    if (static_cast<long long>(u.templates) * m.users > 10'000'000)
      check.fail(b["templates"], "user_behaviour.templates", fmt::format("{} templates for each of {} users: at most 10 million in all", u.templates, m.users));
    if (b["duration_correlation"])
      u.duration_correlation = check.number(b["duration_correlation"], "user_behaviour.duration_correlation", 0, 1);
  }
  const YAML::Node sizes = root["sizes"];
  if (!sizes && root["extends"]) return m;
  if (!sizes || !sizes.IsSequence() || sizes.size() == 0) check.fail(root, "sizes", "must be a non-empty list");
  m.sizes.clear();
  double total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const YAML::Node s = sizes[i];
    const std::string path = fmt::format("sizes[{}]", i);
    check.only_keys(s, path, {"gpus", "share", "duration_quantiles"});
    for (const char* key : {"gpus", "share", "duration_quantiles"})
      if (!s[key]) check.fail(s, path + "." + key, "is required");
    SizeClass size;
    size.gpus = static_cast<int>(check.integer(s["gpus"], path + ".gpus", 1, kMaxGpus));
    size.share = check.number(s["share"], path + ".share", 0, 1);
    const YAML::Node q = s["duration_quantiles"];
    if (!q.IsSequence() || q.size() != kQuantiles)
      check.fail(q, path + ".duration_quantiles", fmt::format("must be a list of {} durations (at probabilities 0, 0.05, ..., 0.95, 0.975, 0.99, "
                                                   "0.995, 0.999, 1)", kQuantiles));
    for (std::size_t k = 0; k < q.size(); ++k) {
      size.duration_quantiles.push_back(check.number(q[k], fmt::format("{}.duration_quantiles[{}]", path, k), 0, kMaxDurationS));
      if (k > 0 && size.duration_quantiles[k] < size.duration_quantiles[k - 1])
        check.fail(q[k], fmt::format("{}.duration_quantiles[{}]", path, k), "must not be below the previous quantile");
    }
    if (!m.sizes.empty() && size.gpus <= m.sizes.back().gpus)
      check.fail(s["gpus"], path + ".gpus", "GPU counts must be listed in ascending order, once each");
    total += size.share;
    m.sizes.push_back(std::move(size));
  }
  if (std::fabs(total - 1) > 1e-3) check.fail(sizes, "sizes", fmt::format("shares must sum to 1 (got {})", total));
  if (std::fabs(total - 1) > 1e-9)
    for (auto& s : m.sizes) s.share /= total;
  return m;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

std::string default_family(const std::string& cluster_source) {
  for (const auto& p : presets())
    if (p.name == cluster_source) return p.name;
  return "philly";
}

WorkloadModel load_model(const std::string& name_or_path) {
  for (const auto& p : presets())
    if (p.name == name_or_path) return parse_model(p.yaml, p.name);
  const auto text = read_file(name_or_path);
  if (!text) {
    std::string names;
    for (const auto& n : family_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("'{}': neither a workload family ({}) nor a readable model file", name_or_path, names));
  }
  return parse_model(*text, name_or_path);
}


std::string to_yaml(const WorkloadModel& m, const std::string& header_comment) {
  std::ostringstream out;
  std::istringstream comment(header_comment);
  for (std::string line; std::getline(comment, line);) out << "# " << line << '\n';
  const auto list = [](const auto& values) {
    std::string s;
    for (const double v : values) s += (s.empty() ? "" : ", ") + fmt::format("{}", v);
    return "[" + s + "]";
  };
  out << "name: " << yaml_scalar(m.name) << '\n';
  out << "source: " << yaml_scalar(m.source) << '\n';
  out << "hourly_weights: " << list(m.hourly_weights) << '\n';
  out << fmt::format("max_overestimate: {}\nestimate_round_s: {}\nusers: {}\n", m.max_overestimate,
                     m.estimate_round_s, m.users);
  if (const UserBehaviour& u = m.user_behaviour; u.on())
    out << fmt::format("user_behaviour: {{templates: {}, repeat: {}, activity_skew: {}, duration_correlation: {}}}\n",
                       u.templates, u.repeat, u.activity_skew, u.duration_correlation);
  out << "sizes:\n";
  for (const auto& s : m.sizes)
    out << fmt::format("  - {{gpus: {}, share: {}, duration_quantiles: {}}}\n", s.gpus, s.share,
                       list(s.duration_quantiles));
  return out.str();
}

WorkloadModel fit_model(const trace::Trace& trace, const std::string& name) {
  std::map<int, std::vector<double>> by_gpus;
  std::vector<double> all;
  WorkloadModel m;
  m.name = name;
  m.hourly_weights.fill(0);
  std::size_t n = 0;
  for (const auto& j : trace.jobs) {
    if (j.gpus <= 0 || j.duration < 0) continue;  // jobs the simulator would reject carry no GPU load
    if (static_cast<double>(j.duration) > kMaxDurationS)  // the model file written would not load
      throw InputError(fmt::format("{}: job {} lasts {} s, past the {:.0e} s a workload model may hold", trace.source, j.id, j.duration,
                                   kMaxDurationS));
    if (j.gpus > kMaxGpus)
      throw InputError(
          fmt::format("{}: job {} asks for {} GPUs, past the {} a workload model may hold", trace.source, j.id, j.gpus, kMaxGpus));
    by_gpus[j.gpus].push_back(static_cast<double>(j.duration));
    all.push_back(static_cast<double>(j.duration));
    m.hourly_weights[static_cast<std::size_t>((j.submit % 86400) / 3600)] += 1;
    ++n;
  }
  if (n == 0) throw InputError(trace.source + ": no job with GPUs and a duration to fit a workload model to");
  m.source = fmt::format("fitted to {} ({} jobs with GPUs)", trace.source, n);
  normalise(m.hourly_weights);
  const std::vector<double> pooled = quantiles_of(all);
  for (auto& [gpus, durations] : by_gpus) {
    SizeClass s;
    s.gpus = gpus;
    s.share = static_cast<double>(durations.size()) / static_cast<double>(n);
    s.duration_quantiles = durations.size() >= kMinJobsPerSize ? quantiles_of(durations) : pooled;
    m.sizes.push_back(std::move(s));
  }
  return m;
}

}  // namespace rltune::workload
