#pragma once
// A small solver-neutral mixed-integer linear program: variables with bounds and kinds, linear
// constraints with lower/upper bounds, a linear objective, and solve options. Backends (milp/glpk/) turn
// it into their own form; no backend type appears here.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rltune::milp {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class VarKind { continuous, integer, binary };

struct Variable {
  std::string name;  // for messages and debugging only
  VarKind kind = VarKind::continuous;
  double lower = 0;  // -kInfinity allowed
  double upper = kInfinity;
  double objective = 0;  // coefficient in the objective
};

struct Term {
  int var;  // index into Model::variables
  double coef;
};

// lower <= sum(terms) <= upper; use -kInfinity / kInfinity for one-sided rows, lower == upper for equality.
struct Constraint {
  std::string name;
  std::vector<Term> terms;
  double lower = -kInfinity;
  double upper = kInfinity;
};

struct Model {
  bool maximize = false;
  double objective_constant = 0;
  std::vector<Variable> variables;
  std::vector<Constraint> constraints;

  int add_variable(Variable v) {
    variables.push_back(std::move(v));
    return static_cast<int>(variables.size()) - 1;
  }
  int add_constraint(Constraint c) {
    constraints.push_back(std::move(c));
    return static_cast<int>(constraints.size()) - 1;
  }
};

struct SolveOptions {
  double time_limit_ms = 20;          // wall-clock budget; <= 0 = none
  double relative_gap = 0;            // stop when the proven gap is at most this (0 = prove optimality)
  long node_limit = 0;                // stop after this many branch-and-bound nodes (0 = none): unlike the
                                      // time limit, it stops at the same point on every machine
                                      // (status feasible with the best solution, or error without one)
  std::vector<double> warm_start;     // optional feasible values for every variable (empty = none);
                                      // an infeasible one is ignored (Solution::message says why), a
                                      // feasible one is kept: a time_limit result is never worse
};

enum class Status {
  optimal,     // proven optimal (within relative_gap)
  feasible,    // a feasible solution, optimality not proven, for a reason other than the time limit
  time_limit,  // the time limit expired; `values` holds the best feasible solution if has_solution
  infeasible,  // no feasible solution exists
  unbounded,   // the objective is unbounded
  error,       // the backend failed; `message` says why
};
const char* to_string(Status s);

struct Solution {
  Status status = Status::error;
  bool has_solution = false;   // values/objective are meaningful
  double objective = 0;        // including objective_constant
  double gap = 0;              // relative gap between the best solution and the best bound: 0 when proven
                               // optimal, within relative_gap when optimal by that tolerance, kInfinity
                               // when there is no solution or no finite bound is known
  std::int64_t wall_us = 0;    // time spent in solve()
  std::vector<double> values;  // one per variable when has_solution
  std::string message;
};

// Throws InputError naming the variable or constraint when the model is malformed: a term naming a missing
// variable, NaN or infinite coefficients, NaN bounds, lower > upper, a lower bound of +inf or an upper bound
// of -inf, a warm start whose size is not the number of variables or that holds NaN/inf, a negative or NaN
// relative_gap, a NaN time limit. solve() calls it first.
void validate(const Model& model, const SolveOptions& options = {});

// Solves with the default backend (GLPK branch-and-cut with presolve). Never throws for solver outcomes:
// infeasible, unbounded, time limits and backend failures are statuses. Throws InputError only for a
// malformed model (a term naming a missing variable, lower > upper, NaN coefficients).
Solution solve(const Model& model, const SolveOptions& options = {});

}  // namespace rltune::milp
