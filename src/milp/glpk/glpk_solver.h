#pragma once
// The GLPK 5.0 backend of milp::solve(). Only src/milp/glpk/ includes <glpk.h>; this header stays GLPK-free.
#include "milp/model.h"

namespace rltune::milp::glpk {

// Solves a model that milp::validate() accepted, with glp_intopt (branch-and-cut, presolve on).
// Same contract as milp::solve(): solver outcomes are statuses, never exceptions. Safe to call from several
// threads at once (see glpk_solver.cpp for why).
Solution solve(const Model& model, const SolveOptions& options);

// Test support: runs a deliberately invalid GLPK call inside the same fatal-error guard solve() uses and
// returns what that path reports (Status::error, GLPK's message). Lets tests prove that a GLPK fatal error
// becomes a status instead of abort(), without leaking or corrupting later solves.
Solution provoke_fatal_error_for_test();

}  // namespace rltune::milp::glpk
