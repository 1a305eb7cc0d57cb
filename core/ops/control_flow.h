#ifndef GUARDJIT_CORE_OPS_CONTROL_FLOW_H_
#define GUARDJIT_CORE_OPS_CONTROL_FLOW_H_

// torch.cond as a graph node: `higher_order.cond(pred, true_graph,
// false_graph, operands)`. The branches are nested subgraphs taking the
// operands as their placeholders; the node returns the taken branch's
// outputs (select them with getitem). Shape inference decides a predicate
// over sizes (recording its guard) and infers the taken branch; the
// specializer inlines it; the eager interpreter runs either branch on the
// predicate's value.

namespace guardjit {

inline constexpr char kCondTarget[] = "higher_order.cond";
// Argument positions.
inline constexpr int kCondPred = 0, kCondTrue = 1, kCondFalse = 2,
                     kCondOperands = 3;

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_CONTROL_FLOW_H_
