#include "milp/model.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "milp/glpk/glpk_solver.h"

namespace rltune::milp {

const char* to_string(Status s) {
  switch (s) {
    case Status::optimal: return "optimal";
    case Status::feasible: return "feasible";
    case Status::time_limit: return "time_limit";
    case Status::infeasible: return "infeasible";
    case Status::unbounded: return "unbounded";
    case Status::error: return "error";
  }
  return "unknown";
}

namespace {

std::string describe_variable(const Model& model, int j) {
  const std::string& name = model.variables[static_cast<std::size_t>(j)].name;
  return name.empty() ? fmt::format("variable {}", j) : fmt::format("variable {} '{}'", j, name);
}

std::string describe_constraint(const Model& model, std::size_t i) {
  const std::string& name = model.constraints[i].name;
  return name.empty() ? fmt::format("constraint {}", i) : fmt::format("constraint {} '{}'", i, name);
}

// Bounds may be infinite, but only on their own side: a lower bound of +inf or an upper bound of -inf
// leaves nothing feasible and is always a modelling mistake.
void check_bounds(double lower, double upper, const std::string& what) {
  if (std::isnan(lower) || std::isnan(upper))
    throw InputError(fmt::format("milp: {}: bound is NaN", what));
  if (lower == kInfinity) throw InputError(fmt::format("milp: {}: lower bound is +inf", what));
  if (upper == -kInfinity) throw InputError(fmt::format("milp: {}: upper bound is -inf", what));
  if (lower > upper)
    throw InputError(fmt::format("milp: {}: lower bound {} > upper bound {}", what, lower, upper));
}

}  // namespace

void validate(const Model& model, const SolveOptions& options) {
  if (!std::isfinite(model.objective_constant))
    throw InputError(fmt::format("milp: objective constant {} is not finite", model.objective_constant));
  const int n = static_cast<int>(model.variables.size());
  for (int j = 0; j < n; ++j) {
    const Variable& v = model.variables[static_cast<std::size_t>(j)];
    if (!std::isfinite(v.objective))
      throw InputError(fmt::format("milp: {}: objective coefficient {} is not finite",
                                   describe_variable(model, j), v.objective));
    check_bounds(v.lower, v.upper, describe_variable(model, j));
  }
  for (std::size_t i = 0; i < model.constraints.size(); ++i) {
    const Constraint& c = model.constraints[i];
    for (const Term& t : c.terms) {
      if (t.var < 0 || t.var >= n)
        throw InputError(fmt::format("milp: {}: term names variable {}, but the model has {} variables",
                                     describe_constraint(model, i), t.var, n));
      if (!std::isfinite(t.coef))
        throw InputError(fmt::format("milp: {}: coefficient {} of {} is not finite",
                                     describe_constraint(model, i), t.coef, describe_variable(model, t.var)));
    }
    check_bounds(c.lower, c.upper, describe_constraint(model, i));
  }
  if (!options.warm_start.empty()) {
    if (options.warm_start.size() != model.variables.size())
      throw InputError(fmt::format("milp: warm start has {} values, but the model has {} variables",
                                   options.warm_start.size(), n));
    for (int j = 0; j < n; ++j)
      if (!std::isfinite(options.warm_start[static_cast<std::size_t>(j)]))
        throw InputError(fmt::format("milp: warm start value of {} is not finite", describe_variable(model, j)));
  }
  if (options.node_limit < 0) throw InputError(fmt::format("milp: node_limit {} must be >= 0", options.node_limit));
  if (!(options.relative_gap >= 0) || !std::isfinite(options.relative_gap))
    throw InputError(fmt::format("milp: relative_gap {} must be finite and >= 0", options.relative_gap));
  if (std::isnan(options.time_limit_ms)) throw InputError("milp: time_limit_ms is NaN");
}

Solution solve(const Model& model, const SolveOptions& options) {
  validate(model, options);
  return glpk::solve(model, options);
}

}  // namespace rltune::milp
