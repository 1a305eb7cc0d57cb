// The bad-input catalogue's cases for the options structs (run by
// bad_input_catalogue_test.cc).

#include <cstring>
#include <vector>

#include "bad_input_catalogue.h"

namespace gjtest::catalogue {

std::vector<Case> OptionCases() {
  return {
      {"context: max_cached_bytes -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.max_cached_bytes = -1;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->max_cached_bytes is -1"}},
      {"context: struct_size 7",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.struct_size = 7;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->struct_size is 7",
        "gj_context_options_init"}},
      {"context: num_threads INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.num_threads = kInt32Min;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->num_threads is -2147483648"}},
      {"context: max_cached_kernels INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.max_cached_kernels = kInt32Min;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->max_cached_kernels is -2147483648"}},
      {"function: mark_dynamic NULL with a count",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.num_mark_dynamic = 2;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic is NULL", "num_mark_dynamic is 2"}},
      {"function: mark_dynamic input past the inputs",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, 2, 100}, {2, 0, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 2;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 2, dim 0",
        "the graph has 2 inputs"}},
      {"function: mark_dynamic input -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{-1, 0, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input -1"}},
      {"function: mark_dynamic dim -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{1, -1, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 1, dim -1"}},
      {"function: mark_dynamic min above max",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, 50, 10}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 0, dim 0, min 50, max 10)",
        "min <= max"}},
      {"function: mark_dynamic min -5",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, -5, 10}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "min -5"}},
      {"function: recompile_limit INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.recompile_limit = kInt32Min;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->recompile_limit is -2147483648"}},
      {"function: struct_size 0",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.struct_size = 0;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->struct_size is 0",
        "gj_function_options_init"}},
      {"function stats: struct_size 0",
       Kind::kOptions,
       [](Env& e, Probe&) {
         gj_function_stats s;
         gj_function_stats_init(&s);
         s.struct_size = 0;
         return gj_function_get_stats(e.id.get(), &s);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_get_stats", "stats->struct_size is 0",
        "gj_function_stats_init"}},
      {"memory stats: struct_size 3",
       Kind::kOptions,
       [](Env& e, Probe&) {
         gj_memory_stats s;
         gj_memory_stats_init(&s);
         s.struct_size = 3;
         return gj_context_get_memory_stats(e.ctx.get(), &s);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_get_memory_stats", "stats->struct_size is 3",
        "gj_memory_stats_init"}},
      {"call options: struct_size 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_call_options o = CallOptions();
         o.struct_size = 0;
         return e.Call1(p, e.relu.get(), {p.Floats({4}).dl()},
                        p.Output<float>({4}).dl(), &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "options->struct_size is 0",
        "gj_call_options_init"}},
      {"call options: timeout_us INT64_MIN",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_call_options o = CallOptions();
         o.timeout_us = kInt64Min;
         return e.Alloc1(p, e.relu.get(), {p.Floats({4}).dl()}, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc",
        "options->timeout_us is -9223372036854775808"}},
      {"call options: cancel set before call_alloc",
       Kind::kCall,
       [](Env& e, Probe& p) {
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Alloc1(p, e.relu.get(), {p.Floats({4}).dl()}, &o);
       },
       GJ_CANCELLED,
       {"gj_function_call_alloc", "function 'activation'",
        "cancelled by the host"}},
      {"call options: a 1 us timeout passes while compiling",
       Kind::kCall,
       [](Env& e, Probe& p) {
         FunctionPtr f = e.FreshRelu();
         gj_call_options o = CallOptions();
         o.timeout_us = 1;
         return e.Call1(p, f.get(), {p.Floats({64}).dl()},
                        p.Output<float>({64}).dl(), &o);
       },
       GJ_DEADLINE_EXCEEDED,
       {"gj_function_call", "function 'activation'", "timeout"}},
      {"call options: cancel set, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.eager.get(), "activation", {"r"}, "act", Env::ReluNode));
         FunctionPtr f = CreateFunction(e.eager.get(), e.graphs.back().get());
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Call1(p, f.get(), {p.Floats({8}).dl()},
                        p.Output<float>({8}).dl(), &o);
       },
       GJ_CANCELLED,
       {"gj_function_call", "function 'activation'", "cancelled by the host"}},
      {"call options: 1 us timeout, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.eager.get(), "activation", {"r"}, "act", Env::ReluNode));
         FunctionPtr f = CreateFunction(e.eager.get(), e.graphs.back().get());
         gj_call_options o = CallOptions();
         o.timeout_us = 1;
         return e.Alloc1(p, f.get(), {p.Floats({8}).dl()}, &o);
       },
       GJ_DEADLINE_EXCEEDED,
       {"gj_function_call_alloc", "function 'activation'", "timeout"}},
      {"call options: cancel set past the recompile limit",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_function_options fo = FunctionOptions();
         fo.recompile_limit = 0;
         FunctionPtr f = e.FreshRelu(&fo);
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Call1(p, f.get(), {p.Floats({8}).dl()},
                        p.Output<float>({8}).dl(), &o);
       },
       GJ_CANCELLED,
       {"gj_function_call", "function 'activation'", "cancelled by the host"}},
      {"call options: mark_dynamic dim past the input's rank",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 3, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         FunctionPtr f = e.FreshRelu(&o);
         return e.Call1(p, f.get(), {p.Floats({4}).dl()},
                        p.Output<float>({4}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "mark_dynamic", "dim 3", "input 'r'", "rank 1"}},
      {"precompile options: struct_size 5",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_call_options o = CallOptions();
         o.struct_size = 5;
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "options->struct_size is 5"}},
      {"precompile options: timeout_us -1",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_call_options o = CallOptions();
         o.timeout_us = -1;
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "timeout_us is -1"}},
  };
}

}  // namespace gjtest::catalogue
