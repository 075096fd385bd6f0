// Microsoft Philly `cluster_job_log` (Jeon et al., ATC'19): one JSON array of job objects,
//   {"jobid", "user", "vc", "status" (Pass/Killed/Failed), "submitted_time" ("YYYY-MM-DD HH:MM:SS"),
//    "attempts": [{"start_time", "end_time", "detail": [{"ip", "gpus": [GPU ids]}]}]}
// where a time may be null or the string "None" (an empty string is read the same way); times are UTC,
// fractions of a second rounded. The real file holds 117,325 jobs, so it is streamed
// through nlohmann::json's SAX interface: only the job being read is in memory, never a DOM of the file.
// A document that is one job object (not an array) is read as a one-job trace.
//
// Rules:
// - submit = seconds since the earliest submitted_time of the jobs kept (the trace starts at 0).
// - duration = sum over the attempts that have both times of (end_time - start_time): the gaps between
//   attempts are re-queueing after a failure, i.e. waiting, not running.
// - gpus = the GPU ids over all `detail` entries of the LAST attempt, the allocation the job ended with
//   (the same id on two machines is two GPUs).
// - jobid, user, vc and status are carried over (null = empty); other keys are ignored.
// Left out and counted by reason (RowSink::skip, never an error): "no submitted_time", "no attempts"
// (never started), "last attempt has no end_time (still running)", "last attempt has no start_time",
// "no GPUs in the last attempt".
// Bad rows (RowSink::bad_row: an error, or a counted skip under --skip-invalid): a value of the wrong JSON
// type (a number where a string is expected, a string where a list is expected, ...), date text that is
// not YYYY-MM-DD HH:MM:SS, an attempt that ends before it starts, more than 1e6 GPUs. Invalid JSON (a
// truncated file, a missing comma) is always an error: nothing after it can be trusted.
// Errors give the file, the line, a field path such as attempts[1].end_time, the job's 1-based index in
// the array and the byte offset (the real file may be a single line, where the line says little). Under
// --skip-invalid, bad jobs are counted under the path without indices (attempts[].end_time) and the
// message alone, so that the counts by reason stay few.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <set>
#include <utility>

#include "core/datetime.h"
#include "core/csv.h"
#include "core/error.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

constexpr long kMaxGpus = 1'000'000;
// Sums of attempt durations are capped here: far above RowSink's 1e12 s limit (so the sink still rejects
// them), far below int64 overflow however many attempts a job lists.
constexpr Seconds kDurationCap = 1'000'000'000'000'000;

// What the JSON parser has consumed so far, shared by the copies of CountingIterator.
struct InputPosition {
  std::size_t bytes = 0;
  long line = 1;        // line of the next byte
  long token_line = 1;  // line of the last non-blank byte: the line of the value just reported
};

// An input iterator over a stream that counts what the parser reads. SAX callbacks carry no position, so
// errors found in them read it here. The parser reads one byte past a number (a comma, a bracket or a
// blank), never a whole token ahead, so `token_line` is the line of the value being reported.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;

  CountingIterator() = default;  // end of input
  CountingIterator(std::istream& in, InputPosition& position) : it_(in), position_(&position) {}

  char operator*() const { return *it_; }
  CountingIterator& operator++() {
    const char c = *it_;
    ++position_->bytes;
    if (c == '\n') ++position_->line;
    else if (c != ' ' && c != '\t' && c != '\r') position_->token_line = position_->line;
    ++it_;
    return *this;
  }
  bool operator==(const CountingIterator& other) const { return it_ == other.it_; }

 private:
  std::istreambuf_iterator<char> it_;
  InputPosition* position_ = nullptr;
};

struct Attempt {
  std::optional<Seconds> start, end;
  std::string start_text, end_text;  // for messages
  long gpus = 0;
  std::set<std::pair<std::string, std::string>> machine_gpus;  // (ip, GPU id) of the detail entries with an ip
};

// The job being read, with absolute times.
struct PendingJob {
  JobSpec spec;
  std::optional<Seconds> submitted;
  std::vector<Attempt> attempts;
  bool bad = false;  // a bad row was reported: report nothing more, keep nothing
};

// A JSON scalar as the handler sees it: its kind, and its text (the string itself, or the literal as
// written, for messages).
struct Scalar {
  enum class Kind { null, boolean, number, string } kind;
  std::string text;
};

class PhillyHandler final : public nlohmann::json_sax<nlohmann::json> {
 public:
  PhillyHandler(RowSink& sink, const ReadOptions& options, const InputPosition& position, std::vector<JobSpec>& jobs)
      : sink_(sink), options_(options), position_(position), jobs_(jobs) {}

  bool null() override { return scalar({Scalar::Kind::null, "null"}); }
  bool boolean(bool value) override { return scalar({Scalar::Kind::boolean, value ? "true" : "false"}); }
  bool number_integer(number_integer_t value) override { return scalar({Scalar::Kind::number, std::to_string(value)}); }
  bool number_unsigned(number_unsigned_t value) override {
    return scalar({Scalar::Kind::number, std::to_string(value)});
  }
  bool number_float(number_float_t, const string_t& text) override { return scalar({Scalar::Kind::number, text}); }
  bool string(string_t& value) override { return scalar({Scalar::Kind::string, std::move(value)}); }
  bool binary(binary_t&) override { return scalar({Scalar::Kind::null, "(binary)"}); }  // never in JSON text
  bool key(string_t& name) override {
    key_ = std::move(name);
    // nlohmann keeps the last of a repeated key, other readers the first: neither may be chosen silently.
    if (std::vector<std::string>* seen = keys_seen()) {
      if (std::find(seen->begin(), seen->end(), key_) != seen->end()) bad(field(), "", "appears twice in one object");
      else seen->push_back(key_);
    }
    return true;
  }
  bool start_object(std::size_t) override;
  bool end_object() override;
  bool start_array(std::size_t) override;
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: ...".
    std::string what = e.what();
    if (const auto id_end = what.find("] "); id_end != std::string::npos) what.erase(0, id_end + 2);
    throw InputError(fmt::format("{}:{}: invalid JSON at byte {}: {}", sink_.file(), position_.token_line, byte, what));
  }

 private:
  // Where the parser is: the container being read.
  enum class In { top, jobs, job, attempts, attempt, details, detail, gpus, ignored };

  bool scalar(const Scalar& value);
  // Reports a value that the format does not allow here, when it expects something in this place.
  void wrong_type(const std::string& value);
  // What the format expects in the current place; nullptr for keys rltune ignores.
  const char* expectation() const;
  // Path of the current value inside its job ("attempts[1].end_time").
  std::string field() const;
  // A time value: null, "None" and "" are missing; other text must be a date.
  std::optional<Seconds> time(const Scalar& value, std::string& text);
  // Reports a bad row for the current job, once per job; `detail` is added to the error only.
  void bad(const std::string& field, const std::string& value, const std::string& message,
           const std::string& detail = "");
  // The keys read so far in the current job, attempt or detail object; nullptr elsewhere.
  std::vector<std::string>* keys_seen();
  void begin_job();
  void end_detail();
  void end_attempt();
  void end_job();

  RowSink& sink_;
  const ReadOptions& options_;
  const InputPosition& position_;
  std::vector<JobSpec>& jobs_;
  std::vector<In> stack_{In::top};
  std::string key_;  // the last key read in the innermost object
  PendingJob job_;
  Attempt attempt_;
  long job_index_ = 0;       // 1-based position of the current job in the array
  std::size_t details_ = 0;  // detail entries seen in the current attempt
  std::size_t gpu_ids_ = 0;  // ids seen in the current gpus list
  std::vector<std::string> job_keys_, attempt_keys_, detail_keys_, gpu_names_;  // for repeats
  std::string detail_ip_;  // of the current detail entry
};

std::vector<std::string>* PhillyHandler::keys_seen() {
  switch (stack_.back()) {
    case In::job: return &job_keys_;
    case In::attempt: return &attempt_keys_;
    case In::detail: return &detail_keys_;
    default: return nullptr;
  }
}

constexpr const char* kTimeExpectation = "a date string \"YYYY-MM-DD HH:MM:SS\", null or \"None\"";

const char* PhillyHandler::expectation() const {
  switch (stack_.back()) {
    case In::top: return "a JSON array of jobs";
    case In::jobs: return "a job object";
    case In::job:
      if (key_ == "submitted_time") return kTimeExpectation;
      if (key_ == "attempts") return "a list of attempts (or null)";
      if (key_ == "jobid" || key_ == "user" || key_ == "vc" || key_ == "status") return "a string (or null)";
      return nullptr;
    case In::attempts: return "an attempt object";
    case In::attempt:
      if (key_ == "start_time" || key_ == "end_time") return kTimeExpectation;
      if (key_ == "detail") return "a list of {ip, gpus} objects (or null)";
      return nullptr;
    case In::details: return "an object with ip and gpus";
    case In::detail: return key_ == "gpus" ? "a list of GPU ids (or null)" : nullptr;
    case In::gpus: return "a GPU id string";
    case In::ignored: return nullptr;
  }
  return nullptr;
}

std::string PhillyHandler::field() const {
  const std::string attempt = fmt::format("attempts[{}]", job_.attempts.size());
  const std::string detail = fmt::format("{}.detail[{}]", attempt, details_);
  switch (stack_.back()) {
    case In::job: return key_;
    case In::attempts: return attempt;
    case In::attempt: return attempt + "." + key_;
    case In::details: return detail;
    case In::detail: return detail + "." + key_;
    case In::gpus: return fmt::format("{}.gpus[{}]", detail, gpu_ids_);
    default: return "job";
  }
}

// "attempts[1].detail[0].gpus[3]" -> "attempts[].detail[].gpus[]".
std::string without_indices(const std::string& path) {
  std::string out;
  bool in_brackets = false;
  for (const char c : path) {
    if (c == '[') in_brackets = true;
    if (c == ']') in_brackets = false;
    if (!in_brackets || c == '[') out += c;
  }
  return out;
}

void PhillyHandler::bad(const std::string& field, const std::string& value, const std::string& message,
                        const std::string& detail) {
  if (job_.bad) return;
  job_.bad = true;
  if (!options_.skip_invalid)
    throw InputError::at(sink_.file(), position_.token_line, field, value,
                         fmt::format("{}{} (job {} of the array, near byte {})", message, detail, job_index_,
                                     position_.bytes));
  sink_.bad_row(position_.token_line, without_indices(field), value, message);
}

void PhillyHandler::wrong_type(const std::string& value) {
  if (const char* expected = expectation()) bad(field(), value, std::string("must be ") + expected);
}

void PhillyHandler::begin_job() {
  ++job_index_;
  job_ = PendingJob{};
  job_keys_.clear();
  job_.spec.source_line = position_.token_line;
}

std::optional<Seconds> PhillyHandler::time(const Scalar& value, std::string& text) {
  if (value.kind == Scalar::Kind::null) return std::nullopt;
  if (value.kind != Scalar::Kind::string) {
    wrong_type(value.text);
    return std::nullopt;
  }
  text = value.text;
  if (text == "None" || text.empty()) return std::nullopt;  // how the trace writes a missing time
  const auto t = parse_datetime(text);
  if (!t) bad(field(), text, "is not a date and time (YYYY-MM-DD HH:MM:SS)");
  return t;
}

bool PhillyHandler::scalar(const Scalar& value) {
  const bool is_string = value.kind == Scalar::Kind::string, is_null = value.kind == Scalar::Kind::null;
  switch (stack_.back()) {
    case In::top:
      throw InputError(fmt::format("{}:{}: the document must be a JSON array of Philly jobs, not '{}'", sink_.file(),
                                   position_.token_line, value.text));
    case In::jobs:
      begin_job();  // a job that is not an object: reported as a bad job of its own
      wrong_type(value.text);
      return true;
    case In::job:
      if (key_ == "submitted_time") {
        std::string text;
        job_.submitted = time(value, text);
      } else if (key_ == "jobid" || key_ == "user" || key_ == "vc" || key_ == "status") {
        if (is_string) {
          std::string& target = key_ == "jobid" ? job_.spec.id
                                : key_ == "user"  ? job_.spec.user
                                : key_ == "vc"    ? job_.spec.vc
                                                  : job_.spec.status;
          target = csv::trim(value.text);  // as every CSV field is read: the converted trace must read back the same
        } else if (!is_null) {
          wrong_type(value.text);
        }
      } else if (!is_null) {  // attempts: null = none
        wrong_type(value.text);
      }
      return true;
    case In::attempt:
      if (key_ == "start_time") attempt_.start = time(value, attempt_.start_text);
      else if (key_ == "end_time") attempt_.end = time(value, attempt_.end_text);
      else if (!is_null) wrong_type(value.text);  // detail: null = no machines
      return true;
    case In::detail:
      if (key_ == "ip" && is_string) detail_ip_ = value.text;
      else if (!is_null) wrong_type(value.text);  // gpus: null = none; ip: only to tell machines apart
      return true;
    case In::gpus:
      if (!is_string) {
        wrong_type(value.text);
      } else if (std::find(gpu_names_.begin(), gpu_names_.end(), value.text) != gpu_names_.end()) {
        bad(field(), value.text, "names a GPU twice");
      } else {
        ++attempt_.gpus;
        gpu_names_.push_back(value.text);
      }
      ++gpu_ids_;
      return true;
    case In::attempts:
    case In::details:
      wrong_type(value.text);
      if (stack_.back() == In::details) ++details_;
      return true;
    case In::ignored:
      return true;
  }
  return true;
}

bool PhillyHandler::start_object(std::size_t) {
  switch (stack_.back()) {
    case In::top:
    case In::jobs:
      begin_job();
      stack_.push_back(In::job);
      return true;
    case In::attempts:
      attempt_ = Attempt{};
      details_ = 0;
      attempt_keys_.clear();
      stack_.push_back(In::attempt);
      return true;
    case In::details:
      detail_keys_.clear();
      gpu_names_.clear();
      detail_ip_.clear();
      stack_.push_back(In::detail);
      return true;
    default:
      wrong_type("{...}");
      stack_.push_back(In::ignored);
      return true;
  }
}

bool PhillyHandler::start_array(std::size_t) {
  const In where = stack_.back();
  if (where == In::top) {
    stack_.push_back(In::jobs);
  } else if (where == In::job && key_ == "attempts") {
    stack_.push_back(In::attempts);
  } else if (where == In::attempt && key_ == "detail") {
    stack_.push_back(In::details);
  } else if (where == In::detail && key_ == "gpus") {
    gpu_ids_ = 0;
    gpu_names_.clear();
    stack_.push_back(In::gpus);
  } else {
    if (where == In::jobs) begin_job();
    wrong_type("[...]");
    if (where == In::details) ++details_;
    stack_.push_back(In::ignored);
  }
  return true;
}

bool PhillyHandler::end_object() {
  const In ended = stack_.back();
  stack_.pop_back();
  if (ended == In::job) end_job();
  else if (ended == In::attempt) end_attempt();
  else if (ended == In::detail) end_detail();
  return true;
}

// One machine listed twice in an attempt, naming a GPU again, would count that GPU twice.
void PhillyHandler::end_detail() {
  if (!detail_ip_.empty())
    for (std::size_t k = 0; k < gpu_names_.size(); ++k)  // the list's ids, each once and in order
      if (!attempt_.machine_gpus.emplace(detail_ip_, gpu_names_[k]).second)
        bad(fmt::format("attempts[{}].detail[{}].gpus[{}]", job_.attempts.size(), details_, k), gpu_names_[k],
            fmt::format("names a GPU of machine {} that an earlier detail entry names", detail_ip_));
  ++details_;
}

void PhillyHandler::end_attempt() {
  if (attempt_.start && attempt_.end && *attempt_.end < *attempt_.start)
    bad(fmt::format("attempts[{}].end_time", job_.attempts.size()), attempt_.end_text,
        "is before the attempt's start_time", fmt::format(" '{}'", attempt_.start_text));
  if (attempt_.gpus > kMaxGpus)
    bad(fmt::format("attempts[{}].detail", job_.attempts.size()), std::to_string(attempt_.gpus),
        "lists more than 1e6 GPUs");
  job_.attempts.push_back(std::move(attempt_));
}

void PhillyHandler::end_job() {
  if (job_.bad) return;
  const long line = job_.spec.source_line;
  if (!job_.submitted) return sink_.skip(line, "no submitted_time");
  if (job_.attempts.empty()) return sink_.skip(line, "no attempts");
  const Attempt& last = job_.attempts.back();
  if (!last.end) return sink_.skip(line, "last attempt has no end_time (still running)");
  if (!last.start) return sink_.skip(line, "last attempt has no start_time");
  if (last.gpus == 0) return sink_.skip(line, "no GPUs in the last attempt");
  Seconds duration = 0;
  for (const Attempt& a : job_.attempts)
    if (a.start && a.end) duration = std::min(duration + (*a.end - *a.start), kDurationCap);
  JobSpec spec = std::move(job_.spec);
  spec.submit = *job_.submitted;
  spec.duration = duration;
  spec.gpus = static_cast<int>(last.gpus);
  jobs_.push_back(std::move(spec));
}

}  // namespace

bool detect_philly(const std::string& first_line) {
  std::string_view t = first_line;
  if (t.rfind("\xEF\xBB\xBF", 0) == 0) t.remove_prefix(3);  // UTF-8 byte-order mark
  const auto start = t.find_first_not_of(" \t\r");
  return start != std::string_view::npos && (t[start] == '[' || t[start] == '{');
}

void read_philly(std::istream& in, const ReadOptions& options, RowSink& sink) {
  InputPosition position;
  std::vector<JobSpec> jobs;  // absolute submit times until the earliest is known
  PhillyHandler handler(sink, options, position, jobs);
  nlohmann::json::sax_parse(CountingIterator(in, position), CountingIterator(), &handler);
  add_from_earliest(jobs, sink);
}

}  // namespace rltune::trace
