// Package schedule decides, from the approved ticket plan alone, in what order a delivery
// run's tickets run and whether the run's remaining budgets can pay for them. It is pure:
// no files, no git, no clock.
//
// [Batches] orders tickets by dependsOn into batches for --parallel N: a ticket's batch comes
// after the batches of every ticket it depends on, tickets of one batch are independent of
// each other, no batch holds more than N, and within a batch tickets keep the plan's order.
// A ticket's level is the length of the longest dependency chain below it; each level is cut
// into batches of N in plan order. [Order] is the same with N = 1: a dependency order for
// integration. A dependency on no ticket of the plan, a duplicate id or a cycle (the plan
// contract refuses them already; this package does not rely on it) is an *[Error] with the
// plan contract's code.
//
// [CheckFanOut] is the run_budget_insufficient decision made before any ticket starts: the
// planned writer and review attempts of every ticket, each costing at least the role's
// per-attempt minimum in model turns, tokens and elapsed time, must fit in what remains of
// the role's budget. The answer carries the numbers — attempts, need and remaining per role,
// and which dimensions fall short — so a blocker can state them.
package schedule
