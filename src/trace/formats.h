#pragma once
// The readers behind the registry in reader.cpp: one read_/detect_ pair per format, each in its own file.
// Internal to trace/; users go through readers() and read_trace().
#include <initializer_list>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "trace/reader.h"

namespace rltune::trace {

void read_canonical(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_canonical(const std::string& first_line);
void read_rltune(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_rltune(const std::string& first_line);

void read_helios(std::istream& in, const ReadOptions& options, RowSink& sink);
void read_sacct(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_sacct(const std::string& first_line);
bool detect_helios(const std::string& first_line);
void read_openb(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_openb(const std::string& first_line);
void read_swf(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_swf(const std::string& first_line);
void read_gavel(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_gavel(const std::string& first_line);
void read_philly(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_philly(const std::string& first_line);
void read_pai(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_pai(const std::string& first_line);

// For formats with absolute timestamps: shifts submit times so the earliest job in the file submits at 0,
// then hands every job to the sink.
void add_from_earliest(std::vector<JobSpec>& jobs, RowSink& sink);

// True when the comma-separated header line (a UTF-8 byte-order mark allowed) names every column in `names`:
// the detection rule of the formats with a header row.
bool header_has(const std::string& first_line, std::initializer_list<std::string_view> names);

// "A|B" -> {"A", "B"} (blank parts dropped).
std::vector<std::string> split_alternatives(std::string_view s);

}  // namespace rltune::trace
