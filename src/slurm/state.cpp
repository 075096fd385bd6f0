#include "slurm/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

namespace rltune::slurm {

namespace {

using Json = nlohmann::json;

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) { return s.starts_with(p); });
}

// Splits on `sep` outside brackets.
std::vector<std::string> split_top(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (const char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

long long to_number(const std::string& s, const std::string& what) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) throw SlurmError(fmt::format("{}: '{}' is not a number", what, s));
  return v;
}

Json parse_document(const std::string& text, const char* list, const char* command) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    throw SlurmError(fmt::format("{}: not JSON ({})", command, e.what()));
  }
  if (!doc.is_object() || !doc.contains(list) || !doc[list].is_array())
    throw SlurmError(fmt::format("{}: no '{}' list in the answer", command, list));
  if (doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty())
    throw SlurmError(fmt::format("{}: Slurm reports errors: {}", command, doc["errors"].dump()));
  return doc;
}

// A field of `o` of the expected kind; SlurmError naming it otherwise. Slurm writes absent numbers as null.
template <class T>
T field(const Json& o, const char* key, const std::string& where, T absent) {
  if (!o.contains(key)) throw SlurmError(fmt::format("{}: no field '{}'", where, key));
  const Json& v = o[key];
  if (v.is_null()) return absent;
  try {
    return v.get<T>();
  } catch (const Json::exception&) {
    throw SlurmError(fmt::format("{}: field '{}' has the wrong type ({})", where, key, v.dump()));
  }
}

// A number as Slurm writes it: plain (22.05), or {"set": true, "infinite": false, "number": N} (23.02
// on). Null, unset and infinite read as `absent`.
template <class T>
T number(const Json& o, const char* key, const std::string& where, T absent) {
  if (!o.contains(key)) throw SlurmError(fmt::format("{}: no field '{}'", where, key));
  const Json& v = o[key];
  const auto wrong = [&] { return SlurmError(fmt::format("{}: field '{}' has the wrong type ({})", where, key, v.dump())); };
  const Json* n = &v;
  if (v.is_object()) {
    const auto set = v.find("set"), infinite = v.find("infinite"), value = v.find("number");
    if (set == v.end() || !set->is_boolean() || value == v.end()) throw wrong();
    if (!set->get<bool>() || (infinite != v.end() && infinite->is_boolean() && infinite->get<bool>())) return absent;
    n = &*value;
  }
  if (n->is_null()) return absent;
  if (!n->is_number()) throw wrong();
  return n->get<T>();
}

// An optional string field: "" when absent, null or not a string.
std::string optional_text(const Json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// A state: a string (22.05), or an array of the base state and its flags (23.02 on for nodes, 23.11 on
// for jobs); SlurmError when neither.
std::vector<std::string> state_words(const Json& o, const char* key, const std::string& where) {
  if (o.contains(key) && o[key].is_array() && !o[key].empty()) {
    std::vector<std::string> words;
    for (const Json& w : o[key]) {
      if (!w.is_string()) throw SlurmError(fmt::format("{}: field '{}' has the wrong type ({})", where, key, o[key].dump()));
      words.push_back(w.get<std::string>());
    }
    return words;
  }
  return {field<std::string>(o, key, where, "")};
}

// A job's state as 22.05 names it: a flag such as COMPLETING replaces the base state (job_state_string).
std::string job_state(const Json& j, const std::string& where) {
  const std::vector<std::string> words = state_words(j, "job_state", where);
  for (const char* flag : {"COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
                           "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING"})
    if (std::find(words.begin() + 1, words.end(), flag) != words.end()) return flag;
  return words.front();
}

}  // namespace

bool Node::usable() const {
  if (mixed_gpu_types) return false;  // one GPU type per node is what the plan can model
  for (const char* bad : {"down", "drain", "fail", "maint", "future", "unknown", "reboot", "power", "not_responding", "error"})
    if (state.find(bad) != std::string::npos) return false;
  return true;
}

bool Job::held() const { return priority == 0 || reason.starts_with("JobHeld"); }

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  for (const std::string& item : split_top(list, ',')) {
    const auto open = item.find('[');
    if (open == std::string::npos) {
      if (item.empty() || item.find(']') != std::string::npos) throw SlurmError(fmt::format("bad host list '{}'", list));
      out.push_back(item);
      continue;
    }
    const auto close = item.find(']', open);
    if (close == std::string::npos) throw SlurmError(fmt::format("bad host list '{}'", list));
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (const std::string& range : split_top(item.substr(open + 1, close - open - 1), ',')) {
      const auto dash = range.find('-');
      const std::string lo = range.substr(0, dash), hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      const long long a = to_number(lo, "host list " + list), b = to_number(hi, "host list " + list);
      if (b < a || b - a > 100000) throw SlurmError(fmt::format("bad host range '{}' in '{}'", range, list));
      for (long long k = a; k <= b; ++k) out.push_back(fmt::format("{}{:0{}}{}", prefix, k, lo.size(), suffix));
    }
  }
  return out;
}

GresGpus parse_gres(const std::string& gres) {
  GresGpus g;
  for (std::string entry : split_top(gres, ',')) {
    // An untyped GPU with device files is used as "gpu:(null):2(IDX:0-1)" (Slurm prints its null type).
    if (const auto null_type = entry.find(":(null):"); null_type != std::string::npos) entry.erase(null_type, 7);
    entry = entry.substr(0, entry.find('('));  // "(IDX:0-7)", "(S:0-1)"
    for (const char* prefix : {"gres:", "gres/"})
      if (entry.starts_with(prefix)) entry = entry.substr(std::string(prefix).size());
    if (!starts_with_any(entry, {"gpu:", "gpu="}) && entry != "gpu") continue;
    // gpu[:TYPE]:COUNT, or gpu[:TYPE]=COUNT; without a count ("gpu", "gpu:v100") one GPU, as Slurm reads --gres
    std::replace(entry.begin(), entry.end(), '=', ':');
    auto parts = split_top(entry, ':');
    const auto looks_like_count = [](const std::string& p) {  // a number, or a broken one to refuse below
      return p.empty() || std::isdigit(static_cast<unsigned char>(p[0])) || p[0] == '-' || p[0] == '+';
    };
    if (parts.size() == 1 || (parts.size() == 2 && !looks_like_count(parts[1]))) parts.push_back("1");
    const long long count = to_number(parts.back(), "GRES '" + gres + "'");
    // A count that would wrap an int (2^32 + 8 read as 8) is a broken answer, not a node.
    if (count < 0 || count > 1'000'000 || g.count + count > 1'000'000)
      throw SlurmError(fmt::format("GRES '{}': {} GPUs is out of range", gres, parts.back()));
    const std::string type = parts.size() >= 3 ? parts[1] : "";
    if (g.count > 0 && type != g.type) g.mixed = true;  // "gpu:a100:4,gpu:v100:4" (MIG slices, say)
    if (g.count == 0) g.type = type;
    g.count += static_cast<int>(count);
  }
  return g;
}

bool summarises_partitions(const std::string& sinfo_json) {
  const Json doc = Json::parse(sinfo_json, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && !doc.contains("nodes") && doc.contains("sinfo") && doc["sinfo"].is_array();
}

std::vector<Node> parse_nodes(const std::string& nodes_json, const char* command) {
  const Json doc = parse_document(nodes_json, "nodes", command);
  std::vector<Node> nodes;
  for (const Json& n : doc["nodes"]) {
    Node node;
    node.name = field<std::string>(n, "name", "sinfo node", "");
    if (node.name.empty()) throw SlurmError("sinfo --json: a node without a name");
    const std::string where = "sinfo node " + node.name;
    const GresGpus total = parse_gres(field<std::string>(n, "gres", where, ""));
    node.gpu_type = total.type;
    node.gpus = total.count;
    node.mixed_gpu_types = total.mixed;
    node.gpus_used = parse_gres(field<std::string>(n, "gres_used", where, "")).count;
    node.cpus = number<int>(n, "cpus", where, 0);
    node.cpus_used = number<int>(n, "alloc_cpus", where, 0);
    node.memory_mib = number<long long>(n, "real_memory", where, 0);
    node.memory_used_mib = number<long long>(n, "alloc_memory", where, 0);
    // "idle" and ["DRAIN"] (22.05), or ["IDLE", "DRAIN"] (23.02 on): "idle+drain".
    std::vector<std::string> state = n.contains("state") && n["state"].is_null() ? std::vector<std::string>{"unknown"}
                                                                                  : state_words(n, "state", where);
    if (n.contains("state_flags") && n["state_flags"].is_array())
      for (const auto& flag : n["state_flags"])
        if (flag.is_string()) state.push_back(flag.get<std::string>());
    node.state = fmt::format("{}", fmt::join(state, "+"));
    std::transform(node.state.begin(), node.state.end(), node.state.begin(), [](unsigned char c) { return std::tolower(c); });
    node.partitions = field<std::vector<std::string>>(n, "partitions", where, {});
    if (node.gpus_used > node.gpus) throw SlurmError(fmt::format("{}: {} GPUs used of {}", where, node.gpus_used, node.gpus));
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.name < b.name; });
  // A node listed twice would count its GPUs twice: an inconsistent answer.
  for (std::size_t k = 1; k < nodes.size(); ++k)
    if (nodes[k].name == nodes[k - 1].name) throw SlurmError(fmt::format("sinfo --json: node {} is listed twice", nodes[k].name));
  return nodes;
}

std::vector<Job> parse_jobs(const std::string& squeue_json) {
  const Json doc = parse_document(squeue_json, "jobs", "squeue --json");
  std::vector<Job> jobs;
  for (const Json& j : doc["jobs"]) {
    Job job;
    job.id = number<long long>(j, "job_id", "squeue job", 0);
    if (job.id <= 0) throw SlurmError("squeue --json: a job without an id");
    const std::string where = fmt::format("squeue job {}", job.id);
    job.state = job_state(j, where);
    const long long node_count = number<long long>(j, "node_count", where, 1);
    if (node_count > 1'000'000) throw SlurmError(fmt::format("{}: node_count {} is out of range", where, node_count));
    job.nodes = std::max(1, static_cast<int>(node_count));
    const GresGpus per_node = parse_gres(field<std::string>(j, "tres_per_node", where, ""));
    const GresGpus per_job = parse_gres(optional_text(j, "tres_per_job"));
    const GresGpus per_task = parse_gres(optional_text(j, "tres_per_task"));
    if (per_node.count > 0) {
      job.gpus_per_node = per_node.count;
      job.gpus = per_node.count * job.nodes;
      job.gpu_type = per_node.type;
    } else if (per_job.count > 0) {
      job.gpus = per_job.count;
      job.gpu_type = per_job.type;
    } else {  // --gpus-per-task
      job.gpus = per_task.count * (j.contains("tasks") ? std::max(1, number<int>(j, "tasks", where, 1)) : 1);
      job.gpu_type = per_task.type;
    }
    job.mixed_gpu_types = per_node.mixed || per_job.mixed || per_task.mixed;
    job.array_tasks = optional_text(j, "array_task_string");
    job.submit = number<long long>(j, "submit_time", where, 0);
    job.start = number<long long>(j, "start_time", where, 0);
    const long long limit_min = number<long long>(j, "time_limit", where, -1);
    // Past 1e12 s (what a trace may hold, and far from overflowing x 60) it is no limit at all.
    job.time_limit_s = limit_min > 0 && limit_min <= 1'000'000'000'000 / 60 ? limit_min * 60 : -1;
    job.partition = field<std::string>(j, "partition", where, "");
    job.user = field<std::string>(j, "user_name", where, "");
    job.priority = number<long long>(j, "priority", where, 0);
    job.reason = field<std::string>(j, "state_reason", where, "");
    job.admin_comment = optional_text(j, "admin_comment");
    job.required_nodes = expand_hostlist(optional_text(j, "required_nodes"));
    if (job.active()) {
      job.node_list = expand_hostlist(field<std::string>(j, "nodes", where, ""));
      std::vector<std::string> detail;
      if (j.contains("gres_detail") && j["gres_detail"].is_array())
        for (const auto& g : j["gres_detail"])
          if (g.is_string()) detail.push_back(g.get<std::string>());
      for (std::size_t k = 0; k < job.node_list.size(); ++k)
        job.gpus_on_node.push_back(k < detail.size() ? parse_gres(detail[k]).count : job.gpus_per_node);
    }
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  // A job listed twice would get two contradictory priorities: an inconsistent answer.
  for (std::size_t k = 1; k < jobs.size(); ++k)
    if (jobs[k].id == jobs[k - 1].id) throw SlurmError(fmt::format("squeue --json: job {} is listed twice", jobs[k].id));
  return jobs;
}

}  // namespace rltune::slurm
