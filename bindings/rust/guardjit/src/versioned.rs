//! Structs that start with `size_t struct_size` (options, stats, checks),
//! filled by the library's `*_init_v`.
//!
//! guardjit.h: "Fields are only ever appended, so a host built against an
//! older header keeps working (the library reads only the fields that fit in
//! struct_size)". A plain `*_init` writes the whole struct as the *loaded
//! library* declares it, which for a newer library is past the end of the
//! struct this crate declares; `*_init_v(&s, sizeof s)` writes only the bytes
//! it is given and sets `struct_size` to what it wrote: this crate's size,
//! or an older library's smaller one, whose fields are all it then reads (or,
//! for stats, fills).

use guardjit_sys as sys;
use std::mem::{size_of, MaybeUninit};

/// A `struct_size`-versioned struct and its `*_init_v`.
pub(crate) trait Versioned: Copy {
    const INIT_V: unsafe extern "C" fn(*mut Self, usize);
}

macro_rules! versioned {
    ($($t:ident => $init:ident),* $(,)?) => {$(
        impl Versioned for sys::$t {
            const INIT_V: unsafe extern "C" fn(*mut Self, usize) = sys::$init;
        }
        // struct_size is the first field, a usize.
        const _: () = assert!(std::mem::offset_of!(sys::$t, struct_size) == 0);
    )*};
}

versioned! {
    gj_context_options => gj_context_options_init_v,
    gj_memory_stats => gj_memory_stats_init_v,
    gj_graph_load_options => gj_graph_load_options_init_v,
    gj_function_options => gj_function_options_init_v,
    gj_call_options => gj_call_options_init_v,
    gj_function_stats => gj_function_stats_init_v,
    gj_compile_report_options => gj_compile_report_options_init_v,
    gj_compile_check => gj_compile_check_init_v,
    gj_compile_cache_stats => gj_compile_cache_stats_init_v,
    gj_cache_dir_stats => gj_cache_dir_stats_init_v,
}

/// The library's defaults for `T`; `struct_size` is `size_of::<T>()`, or
/// less with an older library (whose missing fields stay zero).
pub(crate) fn init<T: Versioned>() -> T {
    let mut t = MaybeUninit::<T>::zeroed();
    // SAFETY: _init_v writes at most size_of::<T>() bytes into t.
    unsafe { T::INIT_V(t.as_mut_ptr(), size_of::<T>()) };
    // SAFETY: T holds integers, floats and raw pointers, for which every bit
    // pattern (zero included) is valid.
    unsafe { t.assume_init() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_keeps_the_library_defaults_and_declares_this_crates_size() {
        let call: sys::gj_call_options = init();
        assert_eq!(call.struct_size, size_of::<sys::gj_call_options>());
        assert_eq!(
            (call.grad_mode, call.deterministic, call.timeout_us),
            (1, 0, 0)
        );
        assert!(call.cancel.is_null() && call.requires_grad.is_null());
        assert!(call.stream.is_null() && call.synchronize == 0);
        let ctx: sys::gj_context_options = init();
        assert_eq!(ctx.struct_size, size_of::<sys::gj_context_options>());
        assert_eq!(
            (ctx.max_cached_kernels, ctx.max_cached_bytes),
            (1024, 1 << 30)
        );
        // Unset compile cache strings are NULL (the environment's), not "".
        assert!(ctx.cache_dir.is_null() && ctx.cache_key.is_null() && ctx.remote_cache.is_null());
        assert_eq!(ctx.max_cache_bytes, 1 << 30);
        let cache: sys::gj_compile_cache_stats = init();
        assert_eq!(cache.struct_size, size_of::<sys::gj_compile_cache_stats>());
        assert_eq!((cache.kernels_compiled, cache.evictions), (0, 0));
        let dir: sys::gj_cache_dir_stats = init();
        assert_eq!(dir.struct_size, size_of::<sys::gj_cache_dir_stats>());
        let f: sys::gj_function_options = init();
        assert_eq!(f.recompile_limit, 8);
        let stats: sys::gj_function_stats = init();
        assert_eq!(stats.struct_size, size_of::<sys::gj_function_stats>());
    }

    #[test]
    fn init_v_writes_no_more_than_it_is_given() {
        // What an older host's smaller struct gets: the bytes up to its
        // size, and struct_size saying so; the rest of the buffer is
        // untouched.
        let short = std::mem::offset_of!(sys::gj_call_options, stream);
        let mut buf = [0xa5u8; size_of::<sys::gj_call_options>()];
        // SAFETY: buf is as large as the struct and _init_v writes at most
        // `short` bytes of it; read_unaligned copes with the u8 alignment.
        let size = unsafe {
            sys::gj_call_options_init_v(buf.as_mut_ptr().cast(), short);
            buf.as_ptr().cast::<usize>().read_unaligned()
        };
        assert_eq!(size, short);
        assert!(buf[short..].iter().all(|&b| b == 0xa5));
    }
}
