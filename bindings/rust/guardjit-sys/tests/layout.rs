//! Checks the hand-written declarations against the C compiler's view of the
//! installed header: compiles a C program (with `cc` and
//! `pkg-config --cflags guardjit`) that prints the size and alignment of every
//! struct and enum type, the offset and size of every field and the value of
//! every constant, and compares each line with the Rust side.
//!
//! One table below generates both sides, so a field listed here is checked
//! in C and in Rust. Each struct's field list is also matched against the
//! Rust struct by an exhaustive pattern (a field missing from the table fails
//! to compile), and a field the C struct has but the Rust one lacks changes
//! the size or another field's offset.
//!
//! Against the header these declarations were written from (the same
//! GJ_API_VERSION_MINOR) everything must be equal. Against a newer minor the
//! header's rule applies: structs that start with `struct_size` may have
//! grown by appended fields (the library reads only what fits in the
//! caller's struct_size), so there the C size may exceed the Rust one, and
//! the test prints which grew; every declared field must still sit where C
//! has it, and every other struct must match exactly.

use guardjit_sys::*;
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::process::Command;

/// "key value" lines: the Rust side of each check and the C code printing it.
struct Table {
    rust: BTreeMap<String, i128>,
    c: String,
    /// "sizeof T" of the structs that start with struct_size.
    versioned: Vec<String>,
}

impl Table {
    fn put(&mut self, key: String, rust: i128, c_expr: String) {
        self.c += &format!("  printf(\"{key} %lld\\n\", (long long)({c_expr}));\n");
        assert!(
            self.rust.insert(key.clone(), rust).is_none(),
            "{key} listed twice"
        );
    }
}

macro_rules! structs {
    ($t:ident; $($ty:ident { $($field:ident),* $(,)? })*) => {$(
        {
            // Exhaustive: fails to compile when the Rust struct has a field
            // this list lacks (or the other way round).
            #[allow(dead_code)]
            fn exhaustive(v: &$ty) {
                let $ty { $($field: _),* } = v;
            }
            let ty = stringify!($ty);
            $t.put(format!("sizeof {ty}"), size_of::<$ty>() as i128, format!("sizeof({ty})"));
            if [$(stringify!($field)),*][0] == "struct_size" {
                $t.versioned.push(format!("sizeof {ty}"));
            }
            $t.put(format!("alignof {ty}"), align_of::<$ty>() as i128, format!("_Alignof({ty})"));
            $(
                let f = stringify!($field);
                $t.put(
                    format!("offsetof {ty}.{f}"),
                    offset_of!($ty, $field) as i128,
                    format!("offsetof({ty}, {f})"),
                );
                $t.put(
                    format!("sizeof {ty}.{f}"),
                    {
                        // Size of the field's type, read from a pointer
                        // without making a value.
                        fn size_of_pointee<T>(_: *const T) -> usize { size_of::<T>() }
                        let v = std::mem::MaybeUninit::<$ty>::uninit();
                        let p = v.as_ptr();
                        // SAFETY: addr_of! on a field of an uninit value
                        // makes a pointer without reading.
                        size_of_pointee(unsafe { std::ptr::addr_of!((*p).$field) }) as i128
                    },
                    format!("sizeof((({ty}*)0)->{f})"),
                );
            )*
        }
    )*};
}

macro_rules! enums {
    ($t:ident; $($ty:ident),* $(,)?) => {$(
        let ty = stringify!($ty);
        $t.put(format!("sizeof {ty}"), size_of::<$ty>() as i128, format!("sizeof({ty})"));
        // 1 if the C compiler made the enum's type signed.
        $t.put(
            format!("signed {ty}"),
            (<$ty>::MIN != 0) as i128,
            format!("({ty})-1 < 0"),
        );
    )*};
}

macro_rules! consts {
    ($t:ident; $($name:ident),* $(,)?) => {$(
        $t.put(format!("value {}", stringify!($name)), $name as i128, stringify!($name).to_string());
    )*};
}

fn table() -> Table {
    let mut t = Table {
        rust: BTreeMap::new(),
        c: String::new(),
        versioned: Vec::new(),
    };
    structs! { t;
        DLDevice { device_type, device_id }
        DLDataType { code, bits, lanes }
        DLTensor { data, device, ndim, dtype, shape, strides, byte_offset }
        DLManagedTensor { dl_tensor, manager_ctx, deleter }
        gj_context_options {
            struct_size, num_threads, backend, max_cached_kernels, max_cached_bytes, cache_dir,
            max_cache_bytes, cache_key, remote_cache,
        }
        gj_memory_stats {
            struct_size, bytes_in_use, bytes_cached, peak_bytes_in_use, system_allocations,
            cache_hits, compiled_modules, cached_kernels, packed_weight_bytes,
        }
        gj_compile_cache_stats {
            struct_size, kernels_compiled, kernels_loaded, disk_hits, disk_misses, disk_stores,
            remote_hits, remote_misses, remote_stores, lock_waits, lock_timeouts, rejected, errors,
            evictions,
        }
        gj_cache_dir_stats {
            struct_size, records, bytes, oldest_use_ms, newest_use_ms, verified, bad, removed,
        }
        gj_graph_load_options { struct_size, external_data_dir, format }
        gj_arg { kind, name, i, f, str, dtype, ints, floats, refs, len }
        gj_dynamic_dim { input, dim, min, max }
        gj_function_options {
            struct_size, name, recompile_limit, dynamic, mark_dynamic, num_mark_dynamic, fullgraph, mode,
            max_graphs_per_entry, compile, mark_dynamic_stride,
        }
        gj_call_options { struct_size, grad_mode, deterministic, requires_grad, cancel, timeout_us, stream, synchronize }
        gj_function_stats {
            struct_size, calls, hits, misses, compiles, recompiles, fallback_calls, cache_entries,
            compile_ms_total, guard_ns_mean, graph_count, graph_break_count, cuda_graphs_recorded,
            cuda_graph_replays, cuda_graph_pointer_updates, cuda_graph_recaptures, cuda_graph_evictions,
            cuda_graph_pool_bytes, eager_while_compiling, entries_loaded,
        }
        gj_compile_report_options { struct_size, target, emulate, seed }
        gj_compile_check { struct_size, checked, run_code, max_abs_error, within_tolerance }
    }
    enums! { t;
        DLDeviceType, DLDataTypeCode, gj_error_code, gj_backend, gj_dtype, gj_arg_kind, gj_dynamic_mode,
        gj_function_mode, gj_compile_mode, gj_graph_format,
    }
    consts! { t;
        DLPACK_VERSION,
        kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLVPI, kDLROCM, kDLROCMHost,
        kDLExtDev, kDLCUDAManaged,
        kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex,
        GJ_API_VERSION_MAJOR, GJ_API_VERSION_MINOR, GJ_DL_BOOL,
        GJ_OK, GJ_CANCELLED, GJ_UNKNOWN, GJ_INVALID_ARGUMENT, GJ_DEADLINE_EXCEEDED, GJ_NOT_FOUND,
        GJ_ALREADY_EXISTS, GJ_PERMISSION_DENIED, GJ_RESOURCE_EXHAUSTED, GJ_FAILED_PRECONDITION,
        GJ_ABORTED, GJ_OUT_OF_RANGE, GJ_UNIMPLEMENTED, GJ_INTERNAL, GJ_UNAVAILABLE, GJ_DATA_LOSS,
        GJ_UNAUTHENTICATED,
        GJ_BACKEND_DEFAULT, GJ_BACKEND_EAGER, GJ_BACKEND_CPU_JIT,
        GJ_DTYPE_FLOAT32, GJ_DTYPE_FLOAT64, GJ_DTYPE_FLOAT16, GJ_DTYPE_BFLOAT16, GJ_DTYPE_INT8,
        GJ_DTYPE_UINT8, GJ_DTYPE_INT16, GJ_DTYPE_INT32, GJ_DTYPE_INT64, GJ_DTYPE_BOOL,
        GJ_ARG_NONE, GJ_ARG_REF, GJ_ARG_INT, GJ_ARG_FLOAT, GJ_ARG_BOOL, GJ_ARG_STRING, GJ_ARG_DTYPE,
        GJ_ARG_DEVICE, GJ_ARG_INT_LIST, GJ_ARG_FLOAT_LIST, GJ_ARG_REF_LIST, GJ_ARG_SUBGRAPH,
        GJ_DYNAMIC_AUTO, GJ_DYNAMIC_STATIC, GJ_DYNAMIC_DYNAMIC,
        GJ_MODE_DEFAULT, GJ_MODE_REDUCE_OVERHEAD, GJ_COMPILE_SYNC, GJ_COMPILE_ASYNC,
        GJ_GRAPH_FORMAT_DETECT, GJ_GRAPH_FORMAT_GUARDJIT, GJ_GRAPH_FORMAT_ONNX,
    }
    t
}

fn pkg_config_cflags() -> Vec<String> {
    let program = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let out = Command::new(&program)
        .args(["--cflags", "guardjit"])
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"));
    assert!(
        out.status.success(),
        "pkg-config --cflags guardjit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn layouts_and_constants_match_the_c_header() {
    let table = table();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("guardjit_sys_layout.c");
    let exe = dir.join("guardjit_sys_layout");
    let program = format!(
        "#include <guardjit/guardjit.h>\n#include <stddef.h>\n#include <stdio.h>\n\
         int main(void) {{\n{}  return 0;\n}}\n",
        table.c
    );
    std::fs::write(&src, program).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .arg("-std=c11")
        .args(pkg_config_cflags())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(status.success(), "{cc} failed on {}", src.display());
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let c: BTreeMap<String, i128> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').unwrap();
            (key.to_string(), value.parse().unwrap())
        })
        .collect();
    let minor = "value GJ_API_VERSION_MINOR";
    let newer_header = c[minor] > table.rust[minor];
    // What a newer minor may change: its own number and the size of
    // struct_size-versioned structs, upwards.
    let may_grow = |key: &String| newer_header && (key == minor || table.versioned.contains(key));
    let mut grown = Vec::new();
    let mismatches: Vec<String> = table
        .rust
        .iter()
        .filter(|&(key, rust)| match c.get(key) {
            Some(c) if c == rust => false,
            Some(c) if may_grow(key) && c > rust => {
                grown.push(format!("{key}: Rust {rust}, C {c}"));
                false
            }
            _ => true,
        })
        .map(|(key, rust)| format!("{key}: Rust {rust}, C {:?}", c.get(key)))
        .collect();
    if newer_header {
        eprintln!(
            "note: the installed guardjit.h is C API 0.{}, these declarations are 0.{}; appended fields not \
             declared here:\n  {}",
            c[minor],
            table.rust[minor],
            grown.join("\n  ")
        );
    }
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
    assert_eq!(c.len(), table.rust.len());
    // Structs 16, enums 9, constants: a sanity check that the table is full.
    assert!(table.rust.len() > 200, "{} checks", table.rust.len());
}

#[test]
fn linked_library_matches_the_header_version() {
    // SAFETY: gj_api_version takes nothing and returns a number.
    let v = unsafe { gj_api_version() };
    assert_eq!(v >> 16, GJ_API_VERSION_MAJOR);
    assert!(
        v & 0xffff >= GJ_API_VERSION_MINOR,
        "library API {v:#x} older than the header's"
    );
    // SAFETY: static storage, NUL-terminated.
    let s = unsafe { std::ffi::CStr::from_ptr(gj_version()) };
    assert!(s.to_str().unwrap().split('.').count() == 3, "{s:?}");
}

#[test]
fn inline_arg_helpers_match_the_header() {
    let a = gj_kwarg(c"alpha".as_ptr(), gj_arg_int(2));
    assert_eq!(
        (a.kind, a.i, a.dtype, a.len),
        (GJ_ARG_INT, 2, GJ_DTYPE_FLOAT32, 0)
    );
    assert!(!a.name.is_null());
    assert_eq!(gj_arg_bool(7).i, 1);
    assert_eq!(gj_arg_bool(0).i, 0);
    let ints = [1i64, 2];
    let l = gj_arg_ints(ints.as_ptr(), 2);
    assert_eq!((l.kind, l.len), (GJ_ARG_INT_LIST, 2));
    assert_eq!(gj_arg_dtype(GJ_DTYPE_BOOL).dtype, GJ_DTYPE_BOOL);
    assert_eq!(gj_arg_none().kind, GJ_ARG_NONE);
}
