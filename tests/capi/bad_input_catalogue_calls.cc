// The bad-input catalogue's cases for the calls: gj_function_call,
// gj_function_call_alloc, gj_function_precompile (run by
// bad_input_catalogue_test.cc).

#include <cstdint>
#include <vector>

#include "bad_input_catalogue.h"

namespace gjtest::catalogue {

std::vector<Case> CallCases() {
  return {
      // Counts and NULL pointers.
      {"call: inputs NULL with num_inputs 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), nullptr, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "inputs is NULL with num_inputs 2"}},
      {"call: three inputs for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl(),
                                 p.Floats({1}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), in, 3, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'identity'",
        "takes 2 inputs (a, b), got 3"}},
      {"call: input 0 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) { return e.CallIdWithA(p, nullptr); },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "input 0 ('a') is NULL"}},
      {"call: output 0 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, nullptr, p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "output 0 is NULL"}},
      {"call: num_outputs 0 for two outputs",
       Kind::kCall,
       [](Env& e, Probe& p) {
         p.Output<float>({2});  // stands for the outputs not passed
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         return gj_function_call(e.id.get(), in, 2, nullptr, 0, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "'identity' returns 2 outputs, got num_outputs 0"}},
      {"call: three outputs for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 3, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"returns 2 outputs, got num_outputs 3"}},
      {"call_alloc: num_outputs 1 for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         return gj_function_call_alloc(e.id.get(), in, 2, nullptr,
                                       p.OutTensors(1), 1);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "returns 2 outputs, got num_outputs 1"}},
      {"call_alloc: input 1 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.AllocId(p, p.Floats({2}).dl(), nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "input 1 ('b') is NULL"}},
      // Ranks and shapes.
      {"call: input ndim 65",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->ndim = 65;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "ndim is 65", "0 to 64"}},
      {"call: output shape NULL with ndim 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->ndim = 2;
         o1.dl()->shape = nullptr;
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "output 1", "shape is NULL"}},
      {"call: output negative size",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         o0.dl()->shape[0] = -1;
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "negative size -1 at dim 0"}},
      {"call: input INT64_MIN size at dim 1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta b({3, kInt64Min});
         return e.CallIdWithB(p, &b.dl);
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "negative size", "at dim 1"}},
      // dtypes.
      {"call: input int32 with 0 lanes",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int32_t>& a = p.Tensor<int32_t>({2}, {1, 2});
         a.dl()->dtype.lanes = 0;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "unsupported dtype", "lanes 0"}},
      {"call: input bool of 16 bits",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int16_t>& b = p.Tensor<int16_t>({3}, {1, 0, 1});
         b.dl()->dtype = {GJ_DL_BOOL, 16, 1};
         return e.CallIdWithB(p, b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "unsupported dtype", "bits 16"}},
      {"call: input float of 0 bits",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->dtype.bits = 0;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "unsupported dtype", "bits 0"}},
      {"call: output uint32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->dtype = {kDLUInt, 32, 1};
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "unsupported dtype", "code 1, bits 32"}},
      {"call_alloc: input bfloat16 with 2 lanes",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int16_t>& b = p.Tensor<int16_t>({3}, {1, 2, 3});
         b.dl()->dtype = {kDLBfloat, 16, 2};
         return e.AllocId(p, p.Floats({2}).dl(), b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "input 1 ('b')", "unsupported dtype",
        "lanes 2"}},
      // Sizes, strides and offsets past int64 or the address space.
      {"call: input of 2^62 x 4 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({int64_t{1} << 62, 4});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "more than 2^63 elements"}},
      {"call: output of 2^40 x 2^40 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta o1({int64_t{1} << 40, int64_t{1} << 40});
         return e.CallIdInto(p, p.Output<float>({2}).dl(), &o1.dl);
       },
       GJ_OUT_OF_RANGE,
       {"gj_function_call", "output 1"}},
      {"call: input [2^40, 2^40, 0] overflows before the 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({int64_t{1} << 40, int64_t{1} << 40, 0});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "2^63"}},
      {"call: byte_offset near 2^63",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Floats({3});
         b.dl()->byte_offset = static_cast<uint64_t>(kInt64Max) - 4;
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "byte_offset", "2^63 bytes"}},
      {"call: negative strides reaching past -2^63",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b =
             p.Tensor<float>({3}, {1, 2, 3}, {-(int64_t{1} << 62)});
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "strides", "2^63"}},
      {"call: data at the top of the address space",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->data = reinterpret_cast<void*>(~uintptr_t{0} - 3);
         return e.CallIdWithA(p, a.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "address space"}},
      {"call: negative stride reaching below address 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Tensor<float>({3}, {1, 2, 3}, {-1024});
         b.dl()->data = reinterpret_cast<void*>(uintptr_t{64});
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "address space"}},
      // Alignment and data.
      {"call: float64 input at data + 4",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<double>& a = p.Tensor<double>({2}, {1, 2, 3});
         a.dl()->byte_offset = 4;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "not aligned", "8-byte item size of float64"}},
      {"call: int16 output at an odd address",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3}, {}, 4);
         DLTensor shifted = *o1.dl();
         shifted.dtype = {kDLInt, 16, 1};
         shifted.data = reinterpret_cast<char*>(o1.buffer().data()) + 1;
         HostTensor<float>& o0 = p.Output<float>({2});
         const DLTensor* in[] = {p.Floats({2}).dl(),
                                 p.Tensor<int16_t>({3}, {1, 2, 3}).dl()};
         const DLTensor* out[] = {o0.dl(), &shifted};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "not aligned", "2-byte"}},
      {"call: output data NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         DLTensor null_data = *o0.dl();
         null_data.data = nullptr;
         return e.CallIdInto(p, &null_data, p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "data is NULL", "2 elements"}},
      // Devices.
      {"call: output on CUDA",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->device = {kDLCUDA, 0};
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 1 is on cuda:0", "the inputs are on cpu"}},
      {"call: input on Metal",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLMetal, 0};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "Metal"}},
      {"call: input on ROCm",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Floats({3});
         b.dl()->device = {kDLROCM, 2};
         return e.CallIdWithB(p, b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "ROCM", "id 2"}},
      {"call: input on CUDA beside a CPU input",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDA, 0};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a') is on cuda:0", "input 1 ('b') on cpu", "one device"}},
      {"call: input in CUDA host memory with device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDAHost, -1};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "CUDAHost", "device_id -1"}},
      {"call: input on CUDA device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDA, -1};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "device_id -1", "CUDA device ordinal"}},
      {"call: input on device type 999",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         int raw = 999;
         std::memcpy(&a.dl()->device.device_type, &raw, sizeof(raw));
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "type 999"}},
      {"call: output CPU device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         o0.dl()->device = {kDLCPU, -1};
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "device_id -1"}},
      // Outputs that do not fit the results.
      {"call: output int32 for float32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, p.Output<int32_t>({2}).dl(),
                             p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2]", "got int32[2]"}},
      {"call: output [2, 1] for [2]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, p.Output<float>({2, 1}).dl(),
                             p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2]", "got float32[2, 1]"}},
      {"call: 0-d output for [1]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({1}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({}).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "expected float32[1]", "got float32[]"}},
      {"call: mm output transposed shape",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({3, 5}).dl()},
                        p.Output<float>({5, 2}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2, 5]", "got float32[5, 2]"}},
      {"call: embedding output int64 for float32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(
             p, e.embed.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int64_t>({2}, {1, 2}).dl()},
             p.Output<int64_t>({2, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2, 3]", "got int64[2, 3]"}},
      // Outputs that overlap.
      {"call: one DLTensor passed as both outputs",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({3}).dl(), p.Floats({3}).dl()};
         HostTensor<float>& o = p.Output<float>({3});
         const DLTensor* out[] = {o.dl(), o.dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"outputs 0 and 1 overlap"}},
      {"call: output 1 starts at output 0's last element",
       Kind::kCall,
       [](Env& e, Probe& p) {
         // o0 = elements 0..2 of a buffer, o1 = elements 2..4.
         HostTensor<float>& o0 = p.Output<float>({3}, {}, 5);
         DLTensor o1 = *o0.dl();
         o1.byte_offset = 2 * sizeof(float);
         const DLTensor* in[] = {p.Floats({3}).dl(), p.Floats({3}).dl()};
         const DLTensor* out[] = {o0.dl(), &o1};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"outputs 0 and 1 overlap"}},
      {"call: output with strides [1, 1]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3, 3}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3, 3}, {1, 1}, 5).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "strides [1, 1]", "share memory"}},
      {"call: interleaved output strides past 2^20 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 =
             p.Output<float>({2048, 1024}, {2, 1}, 2 * 2047 + 1024);
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "strides [2, 1]", "sizes [2048, 1024]", "share memory"}},
      // Shapes an op rejects (found at the call: inputs carry no metadata).
      {"call: mm inner dims differ",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({4, 5}).dl()},
                        p.Output<float>({2, 5}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'matmul'", "node 'prod'",
        "argument 'mat2'", "cannot be multiplied (2x3 and ", "x5)"}},
      {"call: mm of a 3-D tensor",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3, 1}).dl(), p.Floats({3, 5}).dl()},
                        p.Output<float>({2, 5}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "argument 'self'", "expected a 2-D tensor, got a 3-D"}},
      {"call_alloc: mm of float32 and float64",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(
             p, e.mm.get(),
             {p.Floats({2, 3}).dl(), p.Tensor<double>({3, 1}, {1, 2, 3}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "node 'prod'", "argument 'mat2'",
        "float32 != float64"}},
      {"call: add of [2] and [3]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.add.get(),
                        {p.Floats({2}).dl(), p.Floats({3}).dl()},
                        p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'adder'", "node 'sum_xy'", "broadcast"}},
      {"call: cat of [2, 2] and [3, 2] along dim 1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.cat.get(),
                        {p.Floats({2, 2}).dl(), p.Floats({3, 2}).dl()},
                        p.Output<float>({2, 4}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"function 'joiner'", "node 'joined'"}},
      {"call_alloc: view(-1, 5) of 7 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(p, e.view.get(), {p.Floats({7}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"function 'reshaper'", "node 'reshaped'", "7"}},
      {"call: sum over dim 1 of a 1-D input",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.sum.get(), {p.Floats({4}).dl()},
                        p.Output<float>({}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"function 'reducer'", "node 'total'", "dim"}},
      {"call: embedding with float32 indices",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.embed.get(),
                        {p.Floats({4, 3}).dl(), p.Floats({2}).dl()},
                        p.Output<float>({2, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'rows'", "argument 'indices'", "int64 or int32", "float32"}},
      {"call_alloc: embedding index -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(
             p, e.embed.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int64_t>({2}, {1, -1}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "function 'lookup'", "node 'rows'",
        "out of range"}},
      {"call: embedding index 4 of 4 rows, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(
             p, e.embed_eager.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int32_t>({3}, {0, 4, 1}).dl()},
             p.Output<float>({3, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'lookup'", "node 'rows'",
        "out of range"}},
      // Issue #19: a kernel's index check on a dynamic entry names the
      // symbolic size it checked against with its source and value.
      {"call: embedding index 7 of s0 rows, dynamic entry",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_function_options options;
         gj_function_options_init(&options);
         options.dynamic = GJ_DYNAMIC_DYNAMIC;
         const int index = static_cast<int>(e.graphs.size());
         e.graphs.push_back(
             OpGraph(e.ctx.get(), "lookup", {"table", "ids"}, "rows",
                     [](gj_graph_builder* b) {
                       gj_arg a[] = {gj_arg_ref("table"), gj_arg_ref("ids")};
                       EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                           b, "rows", "aten.embedding.default", a, 2)));
                     }));
         FunctionPtr f =
             CreateFunction(e.ctx.get(), e.graphs[index].get(), &options);
         return e.Call1(
             p, f.get(),
             {p.Floats({5, 3}).dl(), p.Tensor<int64_t>({2}, {1, 7}).dl()},
             p.Output<float>({2, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'rows'", "argument 'indices'", "with size s0 = 5",
        "s0 = table.size()[0], 5 in this call"}},
      // The same check on a hit of an entry that became dynamic on its
      // second call (automatic dynamic), after calls that succeeded.
      {"call: index_select index 9 of s0 rows, automatic dynamic hit",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const int index = static_cast<int>(e.graphs.size());
         e.graphs.push_back(OpGraph(
             e.ctx.get(), "pick", {"x", "at"}, "picked",
             [](gj_graph_builder* b) {
               gj_arg a[] = {gj_arg_ref("x"), gj_arg_int(0), gj_arg_ref("at")};
               EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                   b, "picked", "aten.index_select.default", a, 3)));
             }));
         FunctionPtr f = CreateFunction(e.ctx.get(), e.graphs[index].get());
         for (int64_t n : {4, 6, 8}) {  // 6 makes x's dim 0 symbolic
           DLManagedTensor* out = nullptr;
           const DLTensor* in[] = {p.Floats({n, 2}).dl(),
                                   p.Tensor<int64_t>({2}, {0, 3}).dl()};
           EXPECT_TRUE(
               Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, &out, 1)));
           gj_tensor_release(out);
         }
         return e.Call1(
             p, f.get(),
             {p.Floats({7, 2}).dl(), p.Tensor<int64_t>({2}, {9, 1}).dl()},
             p.Output<float>({2, 2}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'picked'", "argument 'index'", "with size s0 = 7",
        "s0 = x.size()[0], 7 in this call"}},
      {"call_alloc: getitem 5 of a split into 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_graph* raw = nullptr;
         const std::string text = std::string(kSplitText) +
                                  R"pb(nodes {
                                         name: "sixth"
                                         target: "getitem"
                                         args { ref: "parts" }
                                         args { i: 5 }
                                       }
                                       outputs { ref: "sixth" })pb";
         gj_error* load = gj_graph_from_text(e.ctx.get(), text.data(),
                                             text.size(), nullptr, &raw);
         if (load != nullptr) return load;  // found at load: also fine
         GraphPtr graph(raw);
         FunctionPtr f = CreateFunction(e.ctx.get(), graph.get());
         return e.Alloc1(p, f.get(), {p.Floats({3}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'sixth'", "5"}},
      // Precompile: metadata only.
      {"precompile: inputs NULL with num_inputs 1",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         return gj_function_precompile(e.relu.get(), nullptr, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "inputs is NULL with num_inputs 1"}},
      {"precompile: one input for two",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta a({2});
         const DLTensor* in[] = {&a.dl};
         return gj_function_precompile(e.id.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "takes 2 inputs (a, b), got 1"}},
      {"precompile: input 1 NULL",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta a({2});
         const DLTensor* in[] = {&a.dl, nullptr};
         return gj_function_precompile(e.id.get(), in, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 1 ('b') is NULL"}},
      {"precompile: complex128 input",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4}, {kDLComplex, 128, 1});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')", "unsupported dtype"}},
      {"precompile: input on CUDA device_id -2",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4});
         r.dl.device = {kDLCUDA, -2};
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')", "device_id -2"}},
      {"precompile: negative size",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4, -2});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')",
        "negative size -2 at dim 1"}},
      {"precompile: shapes mm rejects",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta lhs({2, 3}), rhs({4, 5});
         const DLTensor* in[] = {&lhs.dl, &rhs.dl};
         return gj_function_precompile(e.mm.get(), in, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "function 'matmul'", "node 'prod'",
        "cannot be multiplied"}},
      {"precompile: recompile_limit 0",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_function_options o = FunctionOptions();
         o.recompile_limit = 0;
         FunctionPtr f = e.FreshRelu(&o);
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(f.get(), in, 1, nullptr);
       },
       GJ_FAILED_PRECONDITION,
       {"gj_function_precompile", "'activation'", "recompile limit (0)"}},
      {"precompile: mark_dynamic dim past the rank",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         const gj_dynamic_dim dims[] = {{0, 1, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         FunctionPtr f = e.FreshRelu(&o);
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(f.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "mark_dynamic", "dim 1", "input 'r'"}},
  };
}

}  // namespace gjtest::catalogue
