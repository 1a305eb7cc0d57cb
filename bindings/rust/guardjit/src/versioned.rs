//! Structs that start with `size_t struct_size` (options, stats, checks),
//! filled by the library's `*_init` without trusting it to fit.
//!
//! guardjit.h: "Fields are only ever appended, so a host built against an
//! older header keeps working (the library reads only the fields that fit in
//! struct_size)". But each `*_init` writes the whole struct as the *loaded
//! library* declares it: a newer library's `_init` would write past the end
//! of the struct this crate declares. So `init` runs `_init` on a scratch
//! buffer with room to spare, copies out the fields declared here, and sets
//! `struct_size` to this crate's size, which is what the library then reads
//! (or, for stats, fills) and no more.

use guardjit_sys as sys;
use std::mem::size_of;

/// A `struct_size`-versioned struct and its `*_init`.
pub(crate) trait Versioned: Copy {
    const INIT: unsafe extern "C" fn(*mut Self);
}

macro_rules! versioned {
    ($($t:ident => $init:ident),* $(,)?) => {$(
        impl Versioned for sys::$t {
            const INIT: unsafe extern "C" fn(*mut Self) = sys::$init;
        }
        // struct_size is the first field, a usize.
        const _: () = assert!(std::mem::offset_of!(sys::$t, struct_size) == 0);
    )*};
}

versioned! {
    gj_context_options => gj_context_options_init,
    gj_memory_stats => gj_memory_stats_init,
    gj_graph_load_options => gj_graph_load_options_init,
    gj_function_options => gj_function_options_init,
    gj_call_options => gj_call_options_init,
    gj_function_stats => gj_function_stats_init,
    gj_compile_report_options => gj_compile_report_options_init,
    gj_compile_check => gj_compile_check_init,
}

/// Room for the library's view of any of the structs: today's largest,
/// gj_function_stats, is 152 bytes, and they grow by a few fields per minor
/// version.
const SCRATCH: usize = 1024;

#[repr(C, align(16))]
struct Scratch([u8; SCRATCH]);

/// The library's defaults for `T`, with `struct_size = size_of::<T>()`.
pub(crate) fn init<T: Versioned>() -> T {
    const { assert!(size_of::<T>() <= SCRATCH && std::mem::align_of::<T>() <= 16) };
    let mut scratch = Scratch([0; SCRATCH]);
    // SAFETY: _init writes the library's struct, which starts at the
    // scratch buffer and (checked below) fits in it.
    unsafe { T::INIT(scratch.0.as_mut_ptr().cast()) };
    // SAFETY: struct_size is the first field.
    let library_size = unsafe { scratch.0.as_ptr().cast::<usize>().read() };
    if library_size > SCRATCH {
        // Memory past the buffer may already be overwritten: do not go on.
        eprintln!("guardjit: the library's options struct is {library_size} bytes; this binding allows {SCRATCH}");
        std::process::abort();
    }
    // SAFETY: the buffer is aligned for T and holds size_of::<T>() bytes of
    // integers, floats and raw pointers (every bit pattern valid); fields an
    // older library does not have stay zero.
    let mut t = unsafe { scratch.0.as_ptr().cast::<T>().read() };
    // SAFETY: struct_size is T's first field (checked above), a usize.
    unsafe { (&mut t as *mut T).cast::<usize>().write(size_of::<T>()) };
    t
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
        let ctx: sys::gj_context_options = init();
        assert_eq!(ctx.struct_size, size_of::<sys::gj_context_options>());
        assert_eq!(
            (ctx.max_cached_kernels, ctx.max_cached_bytes),
            (1024, 1 << 30)
        );
        let f: sys::gj_function_options = init();
        assert_eq!(f.recompile_limit, 8);
        let stats: sys::gj_function_stats = init();
        assert_eq!(stats.struct_size, size_of::<sys::gj_function_stats>());
    }
}
