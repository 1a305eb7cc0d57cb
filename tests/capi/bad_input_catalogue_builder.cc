// The bad-input catalogue's cases for the graph builder (run by
// bad_input_catalogue_test.cc).

#include <vector>

#include "bad_input_catalogue.h"

namespace gjtest::catalogue {

std::vector<Case> BuilderCases() {
  return {
      {"builder: empty target",
       Kind::kBuild,
       [](Env& e, Probe&) { return e.Node("n", "", {gj_arg_ref("x")}); },
       GJ_UNIMPLEMENTED,
       {"gj_graph_builder_add_node", "node 'n'", "unknown target ''"}},
      {"builder: getitem on a node with one value",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         gj_arg relu[] = {gj_arg_ref("x")};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "act", "aten.relu.default", relu, 1)));
         gj_arg item[] = {gj_arg_ref("act"), gj_arg_int(0)};
         return gj_graph_builder_add_node(b.get(), "first", "getitem", item, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"node 'first' (getitem)", "index 0 out of range for 'act'"}},
      {"builder: getitem -1 of a list",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const int64_t sizes[] = {1, 2};
         gj_arg split[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "parts", "aten.split_with_sizes.default", split, 2)));
         gj_arg item[] = {gj_arg_ref("parts"), gj_arg_int(-1)};
         return gj_graph_builder_add_node(b.get(), "last", "getitem", item, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"node 'last'", "index -1", "'parts'"}},
      {"builder: getitem with three arguments",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("item", "getitem",
                       {gj_arg_ref("x"), gj_arg_int(0), gj_arg_int(1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'item'", "expects (value, index: int)"}},
      {"builder: a positional and a keyword value for one argument",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("add", "aten.add.Tensor",
                       {gj_arg_ref("x"), gj_arg_ref("y"),
                        gj_kwarg("other", gj_arg_ref("y"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'add'", "multiple values for argument 'other'"}},
      {"builder: GJ_ARG_DEVICE with str NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("moved", "aten._to_copy.default",
                       {gj_arg_ref("x"),
                        gj_kwarg("device", WithKind(gj_arg_string(nullptr),
                                                    GJ_ARG_DEVICE))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'moved'", "args[1] ('device')", "GJ_ARG_DEVICE", "str NULL"}},
      {"builder: GJ_ARG_SUBGRAPH with str NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("branch", "higher_order.cond",
                       {gj_arg_bool(1),
                        WithKind(gj_arg_string(nullptr), GJ_ARG_SUBGRAPH)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'branch'", "args[1]", "GJ_ARG_SUBGRAPH", "str NULL"}},
      {"builder: a subgraph the graph lacks",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const char* operands[] = {"x"};
         return e.Node(
             "branch", "higher_order.cond",
             {gj_arg_bool(1), WithKind(gj_arg_string("yes"), GJ_ARG_SUBGRAPH),
              WithKind(gj_arg_string("no"), GJ_ARG_SUBGRAPH),
              gj_arg_refs(operands, 1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'branch'", "subgraph 'yes'"}},
      {"builder: floats where dims are ints",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const double dims[] = {0.5};
         gj_arg list = gj_arg_none();
         list.kind = GJ_ARG_FLOAT_LIST;
         list.floats = dims;
         list.len = 1;
         return e.Node("total", "aten.sum.dim_IntList",
                       {gj_arg_ref("x"), list});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'total'", "argument 'dim'", "float"}},
      {"builder: an unknown dtype name",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node(
             "cast", "aten._to_copy.default",
             {gj_arg_ref("x"), gj_kwarg("dtype", gj_arg_string("float99"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'cast'", "argument 'dtype'", "unknown dtype 'float99'"}},
      {"builder: a str for a Scalar",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("add", "aten.add.Tensor",
                       {gj_arg_ref("x"), gj_arg_ref("y"),
                        gj_kwarg("alpha", gj_arg_string("two"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'add'", "argument 'alpha'", "expected Scalar", "str"}},
      {"builder: an int for a bool",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("probs", "aten._softmax.default",
                       {gj_arg_ref("x"), gj_arg_int(1), gj_arg_int(1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'probs'", "argument 'half_to_float'", "expected bool", "int"}},
      {"builder: None for a required Tensor",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("prod", "aten.mm.default",
                       {gj_arg_ref("x"), gj_arg_none()});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "argument 'mat2'", "None"}},
      {"builder: ints where cat wants tensors",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const int64_t ints[] = {1, 2};
         return e.Node("joined", "aten.cat.default", {gj_arg_ints(ints, 2)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'joined'", "argument 'tensors'", "Tensor[]"}},
      {"builder: GJ_ARG_REF_LIST with refs NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("joined", "aten.cat.default", {gj_arg_refs(nullptr, 2)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'joined'", "args[0]", "GJ_ARG_REF_LIST", "refs NULL"}},
      {"builder: a keyword argument named ''",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("act", "aten.relu.default",
                       {gj_arg_ref("x"), gj_kwarg("", gj_arg_int(1))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'act'", "unexpected keyword argument ''"}},
      {"builder: add_node after the outputs",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const char* outputs[] = {"x"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         gj_arg relu[] = {gj_arg_ref("x")};
         return gj_graph_builder_add_node(b.get(), "late", "aten.relu.default",
                                          relu, 1);
       },
       GJ_FAILED_PRECONDITION,
       {"gj_graph_builder_add_node", "'late'", "after the outputs"}},
      {"builder: add_constant after the outputs",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         BuilderPtr b = e.Builder();
         const char* outputs[] = {"y"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         return gj_graph_builder_add_constant(b.get(), "late_w",
                                              p.Floats({2}).dl());
       },
       GJ_FAILED_PRECONDITION,
       {"gj_graph_builder_add_constant", "'late_w'", "after the outputs"}},
      {"builder: an output that returns several values",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const int64_t sizes[] = {1, 2};
         gj_arg split[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "parts", "aten.split_with_sizes.default", split, 2)));
         const char* outputs[] = {"x", "parts"};
         return gj_graph_builder_set_outputs(b.get(), outputs, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_set_outputs", "output 1", "'parts'", "getitem"}},
      {"builder: finish finds constants mm cannot multiply",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         gj_graph_builder* raw = nullptr;
         EXPECT_TRUE(Ok(gj_graph_builder_create(e.ctx.get(), "consts", &raw)));
         BuilderPtr b(raw);
         EXPECT_TRUE(Ok(gj_graph_builder_add_constant(b.get(), "w",
                                                      p.Floats({2, 3}).dl())));
         EXPECT_TRUE(Ok(gj_graph_builder_add_constant(b.get(), "v",
                                                      p.Floats({4, 5}).dl())));
         gj_arg mm[] = {gj_arg_ref("w"), gj_arg_ref("v")};
         gj_error* add = gj_graph_builder_add_node(b.get(), "prod",
                                                   "aten.mm.default", mm, 2);
         if (add != nullptr) return add;  // checked at once: also fine
         const char* outputs[] = {"prod"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         return gj_graph_builder_finish(b.get(), p.OutGraph());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "cannot be multiplied", "2x3"}},
      {"builder: a 10,000-byte node name is cut in the message",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const std::string name(10000, 'n');
         return e.Node(name.c_str(), "aten.not_an_op.default",
                       {gj_arg_ref("x")});
       },
       GJ_UNIMPLEMENTED,
       {"gj_graph_builder_add_node", "node 'nnnn", "more bytes)"}},
      {"builder: a duplicate name with a newline is escaped",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         EXPECT_TRUE(Ok(gj_graph_builder_add_input(b.get(), "two\nlines")));
         return gj_graph_builder_add_input(b.get(), "two\nlines");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_add_input", "duplicate", "'two\\nlines'"}},
      {"builder: constant ndim -1",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->ndim = -1;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "ndim is -1"}},
      {"builder: constant data NULL",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({3});
         w.dl()->data = nullptr;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "data is NULL", "3 elements"}},
      {"builder: constant of more than 2^63 elements",
       Kind::kBuild,
       [](Env& e, Probe&) {
         Meta w({int64_t{1} << 62, 4});
         return e.Constant("w", &w.dl);
       },
       GJ_OUT_OF_RANGE,
       {"constant 'w'"}},
      {"builder: constant data misaligned",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<double>& w = p.Tensor<double>({2}, {1, 2, 3});
         w.dl()->byte_offset = 4;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "not aligned", "8-byte"}},
      {"builder: constant on CPU device_id 3",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->device = {kDLCPU, 3};
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "device_id 3"}},
      {"builder: constant float32 with 4 lanes",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->dtype = {kDLFloat, 32, 4};
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "unsupported dtype", "lanes 4"}},
      {"builder: constant with an empty name",
       Kind::kBuild,
       [](Env& e, Probe& p) { return e.Constant("", p.Floats({2}).dl()); },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_add_constant", "empty name"}},
  };
}

}  // namespace gjtest::catalogue
