// A catalogue of bad inputs (issue #19): for the graph loaders, the builder,
// every options struct and the calls, each case gives the code the header
// promises and the parts of the message that name what is at fault (the
// argument, the input or output with its index and name, the node, the option
// field, the line of the text). For every case the message is also non-empty,
// bounded (4 KiB and the "(N more bytes)" tail), free of raw newlines, and
// nothing was written: out-parameters are NULL and caller-provided output
// buffers keep the sentinel they were filled with.
//
// KnownGapCases() holds what the catalogue found the library getting wrong
// when it was written, kept as the header says and fixed since; the test
// BadInputCatalogue.FormerGaps runs them. The harness is in
// bad_input_catalogue.h; the other cases, one table per area, in
// bad_input_catalogue_{loaders,builder,options,calls}.cc.
//
// GJ_CATALOGUE_TRACE=1 prints each label before its case runs (to find the
// case of a crash) and the code and message it got.

#include "bad_input_catalogue.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace gjtest::catalogue {
namespace {

constexpr size_t kMaxMessageBytes = 4096 + 40;

// Cases where the library contradicted its header (or issue #19's message
// rules) when this catalogue was written, fixed since (FormerGaps). Were:
// - placeholder meta sizes: -3 is accepted (the graph loads).
// - node with an empty name: "a node has an empty name" names nothing of it
//   (neither its target nor its position).
// - external data shorter than its length: DATA_LOSS, a code the loaders'
//   error list in the header does not have.
// - constant of more than 2^63 elements: OUT_OF_RANGE, likewise.
// - context backend -1, function dynamic -1: the message says 4294967295.
// - input [0, 2^40, 2^40]: accepted (the product overflows only after the 0).
// - mm rejected after two compiles: "(2x3 and s0xs1) (s0 = rhs.size()[0], 4
//   in this call)" leaves s1 without its source.
std::vector<Case> KnownGapCases() {
  return {
      {"text: a placeholder meta with a negative size",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders {
                                 name: "x"
                                 meta { dtype: FLOAT32 sizes: -3 }
                               }
                               nodes {
                                 name: "act"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "act" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"placeholder 'x'", "-3"}},
      {"text: a node with an empty name",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: ""
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "x" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "empty name", "aten.relu.default"}},
      {"text: external data shorter than its length",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.external_data_dir = e.dir.c_str();
         return e.Text(p,
                       R"pb(constants {
                              name: "w"
                              dtype: FLOAT32
                              sizes: 2
                              external { path: "w.bin" offset: 4 length: 8 }
                            }
                            outputs { ref: "w" })pb",
                       &o);
       },
       GJ_DATA_LOSS,
       {"constant 'w'", "w.bin"}},
      {"text: a constant of more than 2^63 elements",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(constants {
                                 name: "w"
                                 dtype: FLOAT32
                                 sizes: 4611686018427387904
                                 sizes: 4
                                 data: ""
                               }
                               outputs { ref: "w" })pb");
       },
       GJ_OUT_OF_RANGE,
       {"constant 'w'", "2^63"}},
      {"context: backend -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         int raw = -1;
         std::memcpy(&o.backend, &raw, sizeof(raw));
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->backend is -1"}},
      {"function: dynamic -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         int raw = -1;
         std::memcpy(&o.dynamic, &raw, sizeof(raw));
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->dynamic is -1"}},
      {"call: input [0, 2^40, 2^40] overflows after the 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({0, int64_t{1} << 40, int64_t{1} << 40});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "2^63"}},
      {"call: every size symbol in an mm message has its source",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.ctx.get(), "matmul", {"lhs", "rhs"}, "prod",
                     [](gj_graph_builder* b) {
                       gj_arg a[] = {gj_arg_ref("lhs"), gj_arg_ref("rhs")};
                       EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                           b, "prod", "aten.mm.default", a, 2)));
                     }));
         FunctionPtr f = CreateFunction(e.ctx.get(), e.graphs.back().get());
         for (int64_t n : {5, 7}) {  // the second call makes rhs's dim 1 s1
           DLManagedTensor* out = nullptr;
           const DLTensor* in[] = {p.Floats({2, 3}).dl(),
                                   p.Floats({3, n}).dl()};
           EXPECT_TRUE(
               Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, &out, 1)));
           gj_tensor_release(out);
         }
         return e.Call1(p, f.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({4, 6}).dl()},
                        p.Output<float>({2, 6}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "cannot be multiplied", "s0 = rhs.size()[0]",
        "s1 = rhs.size()[1]"}},
  };
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (auto part : {LoaderCases(), BuilderCases(), OptionCases(), CallCases()})
    for (Case& c : part) all.push_back(std::move(c));
  return all;
}

// Runs a case and checks the error, its message and that nothing was written.
void RunCase(Env& env, const Case& c) {
  SCOPED_TRACE(c.label);
  if (std::getenv("GJ_CATALOGUE_TRACE") != nullptr)
    std::fprintf(stderr, "case: %s\n", c.label);
  Probe probe;
  gj_error* error = c.run(env, probe);
  std::string message;
  gj_error_code code = GJ_OK;
  if (error != nullptr) {
    code = gj_error_get_code(error);
    message = gj_error_message(error);
    gj_error_destroy(error);
  }
  if (std::getenv("GJ_CATALOGUE_TRACE") != nullptr)
    std::fprintf(stderr, "  %s: %s\n", CodeName(code), message.c_str());
  for (const std::string& v : probe.Violations()) ADD_FAILURE() << v;
  if (c.kind == Kind::kCall) {
    EXPECT_TRUE(probe.watches_outputs())
        << "a call case must give watched outputs";
  }
  if (error == nullptr) {
    ADD_FAILURE() << "succeeded; expected " << CodeName(c.code);
    return;
  }
  EXPECT_STREQ(CodeName(code), CodeName(c.code)) << message;
  EXPECT_FALSE(message.empty());
  EXPECT_LE(message.size(), kMaxMessageBytes);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : c.parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message lacks \"" << part << "\": " << message;
  }
}

TEST(BadInputCatalogue, EveryCaseFailsWithACodeAndAMessageNamingTheCulprit) {
  Env env;
  const std::vector<Case> cases = AllCases();
  EXPECT_GE(cases.size(), 80u);
  std::set<std::string> labels;
  for (const Case& c : cases) {
    EXPECT_TRUE(labels.insert(c.label).second) << "duplicate label " << c.label;
    EXPECT_FALSE(c.parts.empty()) << c.label;
    RunCase(env, c);
  }
}

// The cases the first version of this catalogue found the library getting
// wrong (fixed since; the header now lists DATA_LOSS and OUT_OF_RANGE for
// the loaders).
TEST(BadInputCatalogue, FormerGaps) {
  Env env;
  for (const Case& c : KnownGapCases()) RunCase(env, c);
}

}  // namespace
}  // namespace gjtest::catalogue
